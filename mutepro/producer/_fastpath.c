/*
 * mutepro.producer._fastpath -- the per-message hot path of MuteProducer, in C.
 *
 * Why C: on a loaded 2-core box plain confluent_kafka.Producer spends ~6.5 us per 512-byte message including
 * the application's own delivery callback. One extra Python frame around produce() costs ~1 us (measured: a
 * wrapper that only forwards its arguments delivers 0.86x of plain), and a Python closure per delivery report
 * another ~2 us (0.70x). The goal is >= 0.9x of plain, i.e. under ~0.7 us of extra work per message. This module
 * is MuteProducer's one per-message path -- partition choice for healthy topics, per partition counters, the
 * report bookkeeping, the key hashes, the Spark sink's rows loop -- without a Python frame; it hands the
 * decisions that need the router (muted partitions, held keys, unknown metadata) to the slow path in
 * slowpath.py, which sends through FastPath.send (see docs/architecture.md, "The per-message path").
 *
 * Concurrency: everything here runs holding the GIL and calls no Python code on the fast path except
 * confluent-kafka's produce()/poll() (C, which keep the GIL for produce) and, at a sticky switch, the chooser's
 * pick() -- after which every check is made again. Python code that changes the counters holds the producer
 * lock, and the lock raises ``gate`` while held: a produce() that finds the gate raised takes the Python path
 * (and waits for the lock there).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <pythread.h>
#include <time.h>
#include <math.h>

/* ---------------------------------------------------------------------------------------------------------- */
/* Tally: one topic's per-partition counters, in one C array                                                   */
/* ---------------------------------------------------------------------------------------------------------- */

/* SEEN_*: sent and reported when busy() last looked (not exposed as columns) */
enum { COL_SENT, COL_SENT_BYTES, COL_REPORTED, COL_OK, COL_SLOW, COL_FAILED, COL_WARM, COL_SEEN_SENT, COL_SEEN_REPORTED,
       NFIELDS };
static const char *const FIELD_NAMES[NFIELDS] = {"sent", "sent_bytes", "reported", "ok", "slow",
                                                 "failed", "warm", "seen_sent", "seen_reported"};

typedef struct {
    PyObject_HEAD
    PyObject *dict;
    PyObject *weakrefs;
    Py_ssize_t count;
    Py_ssize_t capacity;
    long long *cells; /* cells[p * NFIELDS + field] */
    double slow_s;
    /* the C fast path's sticky partition for unkeyed messages (-1: none) */
    long stick_partition;
    double stick_deadline;
    long long stick_sent;
    long stick_msgs;   /* messages sent to the sticky partition so far */
    long stick_stride; /* messages that may go between two precise clock reads (see sticky_choose) */
    long stick_skip;   /* how many of them are left */
    /* While probe_snap is the topic's snapshot and the clock is before probe_until, no half-open partition of
     * the topic can take a probe (Python said so, defer_probes): the fast path keeps the topic's messages. */
    PyObject *probe_snap;
    double probe_until;
} Tally;

static PyTypeObject Tally_Type;
static PyTypeObject Column_Type;
static double monotonic_s(void);

/* Kafka caps a topic far below this; the bound keeps ``cap * NFIELDS * 8`` far from overflowing and a typo
 * (``grow(10**12)``) from allocating the machine's memory. */
#define TALLY_MAX_PARTITIONS (1 << 20)

static int tally_grow_to(Tally *self, Py_ssize_t count) {
    if (count <= self->count)
        return 0;
    if (count > TALLY_MAX_PARTITIONS) {
        PyErr_Format(PyExc_ValueError, "count: %zd partitions is more than a tally tracks (at most %d)", count,
                     TALLY_MAX_PARTITIONS);
        return -1;
    }
    if (count > self->capacity) {
        Py_ssize_t cap = self->capacity ? self->capacity : 8;
        while (cap < count)
            cap *= 2;
        long long *cells = PyMem_Realloc(self->cells, (size_t)cap * NFIELDS * sizeof(long long));
        if (cells == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->cells = cells;
        self->capacity = cap;
    }
    for (Py_ssize_t p = self->count; p < count; p++) {
        long long *row = self->cells + p * NFIELDS;
        for (int f = 0; f < NFIELDS; f++)
            row[f] = 0;
        row[COL_WARM] = -1; /* the send count when the partition first delivered; -1: not yet */
    }
    self->count = count;
    return 0;
}

static int Tally_init(Tally *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"count", "slow_s", NULL};
    Py_ssize_t count;
    double slow_s;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nd", kwlist, &count, &slow_s))
        return -1;
    if (count < 0) {
        PyErr_SetString(PyExc_ValueError, "count: must be >= 0 partitions");
        return -1;
    }
    self->slow_s = slow_s;
    self->stick_partition = -1;
    self->stick_msgs = self->stick_stride = self->stick_skip = 0;
    return tally_grow_to(self, count);
}

static int Tally_traverse(Tally *self, visitproc visit, void *arg) {
    Py_VISIT(self->dict);
    Py_VISIT(self->probe_snap);
    return 0;
}

static int Tally_clear(Tally *self) {
    Py_CLEAR(self->dict);
    Py_CLEAR(self->probe_snap);
    return 0;
}

static void Tally_dealloc(Tally *self) {
    PyObject_GC_UnTrack(self);
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Tally_clear(self);
    PyMem_Free(self->cells);
    self->cells = NULL;
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Tally_grow(Tally *self, PyObject *arg) {
    Py_ssize_t count = PyLong_AsSsize_t(arg);
    if (count == -1 && PyErr_Occurred())
        return NULL;
    if (tally_grow_to(self, count) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A live view of one field of every partition: ``tally.sent[p] += 1`` works as on a list. */
typedef struct {
    PyObject_HEAD
    Tally *tally;
    int field;
} Column;

static PyObject *tally_column(Tally *self, void *closure) {
    Column *col = PyObject_GC_New(Column, &Column_Type);
    if (col == NULL)
        return NULL;
    Py_INCREF(self);
    col->tally = self;
    col->field = (int)(Py_intptr_t)closure;
    PyObject_GC_Track(col); /* a column stored in its tally's __dict__ is a cycle the GC must see */
    return (PyObject *)col;
}

static PyObject *Tally_get_stick(Tally *self, void *closure) {
    if (self->stick_partition < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(self->stick_partition);
}

/* defer_probes(snap, seconds): for ``seconds`` (CLOCK_MONOTONIC, time.monotonic's clock) and as long as ``snap``
 * is the topic's snapshot, no half-open partition of it can take a probe, so the fast path need not hand the
 * topic's messages to Python to ask. Why: a half-open partition used to send *every* message of its topic to
 * the Python path (~10x the cost) for the whole half-open period, 1-2 s per probe round (five probes 250 ms
 * apart), although only one message per probe is a probe. A new snapshot (a partition changed state) ends the
 * deferral at once. */
static PyObject *Tally_defer_probes(Tally *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "defer_probes(snap, seconds)");
        return NULL;
    }
    double seconds = PyFloat_AsDouble(args[1]);
    if (seconds == -1.0 && PyErr_Occurred())
        return NULL;
    if (!(seconds >= 0.0)) {
        PyErr_SetString(PyExc_ValueError, "seconds: must be >= 0 (a number, not NaN)");
        return NULL;
    }
    PyObject *old = self->probe_snap;
    self->probe_snap = Py_NewRef(args[0]);
    self->probe_until = monotonic_s() + seconds;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyObject *Tally_get_probe_snap(Tally *self, void *closure) {
    return Py_NewRef(self->probe_snap != NULL ? self->probe_snap : Py_None);
}

static PyMemberDef Tally_members[] = {
    {"count", T_PYSSIZET, offsetof(Tally, count), READONLY, "partitions tracked"},
    {"slow_s", T_DOUBLE, offsetof(Tally, slow_s), 0, "slow-call threshold in seconds"},
    {"probe_until", T_DOUBLE, offsetof(Tally, probe_until), READONLY,
     "time.monotonic() until which probe_snap's half-open partitions take no probe (defer_probes)"},
    {NULL},
};

static PyGetSetDef Tally_getset[] = {
    {"sent", (getter)tally_column, NULL, "messages handed to librdkafka", (void *)COL_SENT},
    {"sent_bytes", (getter)tally_column, NULL, "value bytes handed to librdkafka", (void *)COL_SENT_BYTES},
    {"reported", (getter)tally_column, NULL, "messages with a final delivery report", (void *)COL_REPORTED},
    {"ok", (getter)tally_column, NULL, "judged successes since the last fold", (void *)COL_OK},
    {"slow", (getter)tally_column, NULL, "judged slow successes since the last fold", (void *)COL_SLOW},
    {"failed", (getter)tally_column, NULL, "judged failures since the last fold", (void *)COL_FAILED},
    {"warm", (getter)tally_column, NULL, "send count at the first delivery (-1: not yet)", (void *)COL_WARM},
    {"stick", (getter)Tally_get_stick, NULL, "the C fast path's sticky partition (None: none)", NULL},
    {"probe_snap", (getter)Tally_get_probe_snap, NULL, "the snapshot defer_probes named (None: none)", NULL},
    {NULL},
};

/* The partitions with messages outstanding, or whose sent or reported count moved since the last call: the
 * only ones a tick has work for. A sticky producer on 1,200 partitions touches ~40 per tick, and looping over
 * all of them in Python cost the driver 2.4 ms a tick. */
static PyObject *Tally_busy(Tally *self, PyObject *unused) {
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t p = 0; p < self->count; p++) {
        long long *row = self->cells + p * NFIELDS;
        int busy = row[COL_SENT] != row[COL_REPORTED] || row[COL_SEEN_SENT] != row[COL_SENT] ||
                   row[COL_SEEN_REPORTED] != row[COL_REPORTED];
        row[COL_SEEN_SENT] = row[COL_SENT];
        row[COL_SEEN_REPORTED] = row[COL_REPORTED];
        if (!busy)
            continue;
        PyObject *v = PyLong_FromSsize_t(p);
        if (v == NULL || PyList_Append(out, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(v);
    }
    return out;
}

static PyObject *Tally_choose_sticky(Tally *self, PyObject *const *args, Py_ssize_t nargs);

static PyMethodDef Tally_methods[] = {
    {"grow", (PyCFunction)Tally_grow, METH_O, "grow(count): track partitions up to count (never shrinks)"},
    {"choose_sticky", (PyCFunction)(void (*)(void))Tally_choose_sticky, METH_FASTCALL,
     "choose_sticky(snap, size, now, sticky_bytes, linger_s, pick) -> partition or None: the sticky rule of the "
     "fast path at an explicit time ``now`` (StickyChooser's clock)"},
    {"busy", (PyCFunction)Tally_busy, METH_NOARGS,
     "busy(): partitions with messages outstanding or whose sent/reported moved since the last call"},
    {"defer_probes", (PyCFunction)(void (*)(void))Tally_defer_probes, METH_FASTCALL,
     "defer_probes(snap, seconds): snap's half-open partitions take no probe for that long"},
    {NULL},
};

static PyTypeObject Tally_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mutepro.producer._fastpath.Tally",
    .tp_basicsize = sizeof(Tally),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Per-partition counters of one topic (C storage; columns are live views).",
    .tp_init = (initproc)Tally_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Tally_dealloc,
    .tp_traverse = (traverseproc)Tally_traverse,
    .tp_clear = (inquiry)Tally_clear,
    .tp_members = Tally_members,
    .tp_getset = Tally_getset,
    .tp_methods = Tally_methods,
    .tp_dictoffset = offsetof(Tally, dict),
    .tp_weaklistoffset = offsetof(Tally, weakrefs),
};

static int Column_traverse(Column *self, visitproc visit, void *arg) {
    Py_VISIT(self->tally);
    return 0;
}

static int Column_clear(Column *self) {
    Py_CLEAR(self->tally);
    return 0;
}

static void Column_dealloc(Column *self) {
    PyObject_GC_UnTrack(self);
    Column_clear(self);
    PyObject_GC_Del(self);
}

static Py_ssize_t Column_len(Column *self) { return self->tally == NULL ? 0 : self->tally->count; }

/* ``i`` comes through the sequence protocol, which already added len() to a negative index once: whatever is
 * still negative is out of range (adding it again would answer col[-4] of 3 with col[2]). */
static long long *column_cell(Column *self, Py_ssize_t i) {
    Py_ssize_t n = Column_len(self);
    if (i < 0 || i >= n) {
        PyErr_SetString(PyExc_IndexError, "partition index out of range");
        return NULL;
    }
    return self->tally->cells + i * NFIELDS + self->field;
}

static PyObject *Column_item(Column *self, Py_ssize_t i) {
    long long *cell = column_cell(self, i);
    return cell == NULL ? NULL : PyLong_FromLongLong(*cell);
}

static int Column_ass_item(Column *self, Py_ssize_t i, PyObject *value) {
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "tally columns have one entry per partition; they cannot be deleted");
        return -1;
    }
    long long v = PyLong_AsLongLong(value);
    if (v == -1 && PyErr_Occurred())
        return -1;
    long long *cell = column_cell(self, i);
    if (cell == NULL)
        return -1;
    *cell = v;
    return 0;
}

static PyObject *Column_repr(Column *self) {
    Py_ssize_t n = Column_len(self);
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLongLong(self->tally->cells[i * NFIELDS + self->field]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    PyObject *r = PyUnicode_FromFormat("<%s %R>", FIELD_NAMES[self->field], list);
    Py_DECREF(list);
    return r;
}

static PySequenceMethods Column_as_sequence = {
    .sq_length = (lenfunc)Column_len,
    .sq_item = (ssizeargfunc)Column_item,
    .sq_ass_item = (ssizeobjargproc)Column_ass_item,
};

static PyTypeObject Column_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mutepro.producer._fastpath.Column",
    .tp_basicsize = sizeof(Column),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One counter of every partition of a Tally (a live view).",
    .tp_dealloc = (destructor)Column_dealloc,
    .tp_traverse = (traverseproc)Column_traverse,
    .tp_clear = (inquiry)Column_clear,
    .tp_as_sequence = &Column_as_sequence,
    .tp_repr = (reprfunc)Column_repr,
};

/* ---------------------------------------------------------------------------------------------------------- */
/* Counts: producer-wide totals (members readable and writable from Python)                                    */
/* ---------------------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    long long sent_total;
    long long reported_total;
    long long produced;
    long long delivered;
    long long buffer_errors;
    long long rerouted;
} Counts;

static PyMemberDef Counts_members[] = {
    {"sent_total", T_LONGLONG, offsetof(Counts, sent_total), 0, "messages handed to librdkafka"},
    {"reported_total", T_LONGLONG, offsetof(Counts, reported_total), 0, "final delivery reports"},
    {"produced", T_LONGLONG, offsetof(Counts, produced), 0, "messages accepted by produce()"},
    {"delivered", T_LONGLONG, offsetof(Counts, delivered), 0, "successful final delivery reports"},
    {"buffer_errors", T_LONGLONG, offsetof(Counts, buffer_errors), 0, "BufferError raised to the application"},
    {"rerouted", T_LONGLONG, offsetof(Counts, rerouted), 0, "keyed messages sent to their muted home's fallback"},
    {NULL},
};

static PyTypeObject Counts_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mutepro.producer._fastpath.Counts",
    .tp_basicsize = sizeof(Counts),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Producer-wide message totals bumped by the C fast path.",
    .tp_new = PyType_GenericNew,
    .tp_members = Counts_members,
};

/* ---------------------------------------------------------------------------------------------------------- */
/* Keyed partitioning: librdkafka's hashes and NULL/empty-key rules (see partition/hashing.py)                 */
/* ---------------------------------------------------------------------------------------------------------- */

enum {
    KP_NONE = 0, /* no C keyed path (custom partitioner or random): keyed messages take the Python path */
    KP_CONSISTENT,
    KP_CONSISTENT_RANDOM,
    KP_MURMUR2,
    KP_MURMUR2_RANDOM,
    KP_FNV1A,
    KP_FNV1A_RANDOM,
};

static uint32_t crc32_table[256];

static void crc32_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc32_table[i] = c;
    }
}

static uint32_t crc32_hash(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (Py_ssize_t i = 0; i < n; i++)
        c = crc32_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint32_t murmur2_hash(const unsigned char *p, Py_ssize_t n) {
    const uint32_t m = 0x5bd1e995u;
    uint32_t h = 0x9747b28cu ^ (uint32_t)n;
    Py_ssize_t body = n & ~(Py_ssize_t)3;
    for (Py_ssize_t i = 0; i < body; i += 4) {
        uint32_t k = (uint32_t)p[i] | ((uint32_t)p[i + 1] << 8) | ((uint32_t)p[i + 2] << 16) |
                     ((uint32_t)p[i + 3] << 24);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (n & 3) {
    case 3:
        h ^= (uint32_t)p[body + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[body + 1] << 8;
        /* fall through */
    case 1:
        h ^= (uint32_t)p[body];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

static uint32_t fnv1a_hash(const unsigned char *p, Py_ssize_t n) {
    uint32_t h = 0x811C9DC5u;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x01000193u;
    }
    if (h & 0x80000000u) /* librdkafka takes abs() of the int32; INT32_MIN stays as it is */
        h = (uint32_t)(-(int64_t)(int32_t)h);
    return h;
}

/* The home partition of ``key`` (>= 0), -1 when librdkafka would pick a random partition for it, -2 when the
 * key is of a type the C path does not read (the Python path decides, and raises for bad types). */
static long key_partition(int mode, PyObject *key, long count) {
    const char *data;
    Py_ssize_t len;
    if (count <= 0 || count > INT32_MAX || mode == KP_NONE) /* (uint32_t)2**32 would divide by zero */
        return -2;
    if (key == NULL || key == Py_None) {
        if (mode == KP_CONSISTENT_RANDOM || mode == KP_MURMUR2_RANDOM || mode == KP_FNV1A_RANDOM)
            return -1;
        data = "";
        len = 0;
    } else if (PyBytes_CheckExact(key)) {
        data = PyBytes_AS_STRING(key);
        len = PyBytes_GET_SIZE(key);
    } else if (PyUnicode_CheckExact(key)) {
        data = PyUnicode_AsUTF8AndSize(key, &len);
        if (data == NULL) {
            PyErr_Clear();
            return -2;
        }
    } else {
        return -2;
    }
    const unsigned char *u = (const unsigned char *)data;
    switch (mode) {
    case KP_CONSISTENT_RANDOM:
        if (len == 0)
            return -1;
        /* fall through */
    case KP_CONSISTENT:
        return (long)(crc32_hash(u, len) % (uint32_t)count);
    case KP_MURMUR2:
    case KP_MURMUR2_RANDOM:
        return (long)((murmur2_hash(u, len) & 0x7FFFFFFFu) % (uint32_t)count);
    case KP_FNV1A:
    case KP_FNV1A_RANDOM:
        return (long)(fnv1a_hash(u, len) % (uint32_t)count);
    }
    return -2;
}

/* crc32(data), murmur2(data), fnv1a(data): the raw unsigned 32-bit hash of a bytes-like object, by the same
 * functions key_partition uses. Python code that must find a key's partition (mutepro.partition.hashing, and
 * through it the router, Spark and rack tools) calls these instead of keeping a copy of the rule. */
typedef uint32_t (*hash_fn)(const unsigned char *, Py_ssize_t);

static PyObject *hash_buffer(PyObject *arg, hash_fn fn) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t h = fn((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(h);
}

static PyObject *py_crc32(PyObject *module, PyObject *arg) { return hash_buffer(arg, crc32_hash); }
static PyObject *py_murmur2(PyObject *module, PyObject *arg) { return hash_buffer(arg, murmur2_hash); }
static PyObject *py_fnv1a(PyObject *module, PyObject *arg) { return hash_buffer(arg, fnv1a_hash); }

static PyObject *py_key_partition(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "key_partition(mode, key, partition_count)");
        return NULL;
    }
    int mode = (int)PyLong_AsLong(args[0]);
    long count = PyLong_AsLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (count > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "partition_count: %ld is more than a Kafka topic can have (int32)", count);
        return NULL;
    }
    return PyLong_FromLong(key_partition(mode, args[1], count));
}

/* ---------------------------------------------------------------------------------------------------------- */
/* FastPath and Reporter                                                                                        */
/* ---------------------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *inner_produce; /* confluent_kafka.Producer.produce, bound */
    PyObject *inner_poll;    /* confluent_kafka.Producer.poll, bound */
    PyObject *snapshots;     /* dict topic -> TopicSnapshot (swapped whole by the mute manager) */
    PyObject *tallies;       /* dict topic -> Tally */
    PyObject *holds;         /* dict (topic, partition) -> deque: anything held sends keyed traffic to Python */
    PyObject *slow_produce;  /* the Python produce(), same signature: everything the fast path does not do */
    PyObject *on_report;     /* the Python report handler: on_report(cb, kind, err, msg) */
    PyObject *queue;         /* the CallbackQueue */
    PyObject *report_marker; /* CallbackQueue's marker of a report entry */
    PyObject *untracked_marker; /* ... of one whose message the collector does not see until it is served */
    PyObject *queue_items;   /* CallbackQueue's deque (its length decides whether a report may go direct) */
    PyObject *picker;        /* StickyChooser.pick(snap) or None: unkeyed messages take the Python path */
    PyObject *default_cb;    /* the config's on_delivery, or None */
    PyObject *reporters;     /* dict (cb, topic) -> Reporter */
    /* identity cache of the last (cb, topic) -> reporter; strong references: a borrowed pointer could name a
     * freed callback whose address a new one reuses, or a reporter freed while the dict is being cleared */
    PyObject *last_cb;
    PyObject *last_topic;
    PyObject *last_reporter;
    long last_kind;          /* the kind of last_reporter (0, or KIND_EXPLICIT) */
    /* identity cache of the last topic -> its Tally (tallies[topic]), strong references: the tracker adds a
     * topic's tally once and never replaces it, so the pair stays right; saves a dict lookup per message */
    PyObject *tally_topic;
    Tally *tally_last;
    /* identity cache of the last topic -> snapshots[topic] (see snapshot_of): the topic (strong: its address
     * must not be reused by another string), the snapshot (borrowed: the dict holds it while its version stays)
     * and the dict's version when it was read */
    PyObject *snapc_topic;
    PyObject *snapc_snap;
    uint64_t snapc_version;
    Counts *counts;
    int key_mode;
    int only_errors;
    int gate;   /* > 0 while Python holds the producer lock */
    int closed; /* produce() must take the Python path (it raises) */
    int ready;  /* __init__ ran: FastPath.__new__ alone leaves every field NULL */
    long long sticky_bytes;
    double linger_s;
    /* Per-thread poll state, (depth << 1) | direct: how many polls of the wrapped producer this thread is
     * inside (any poll: the application's, or produce()'s inline one), and whether the innermost one is the
     * application's (its callbacks may run straight from the report). Per thread because several threads
     * poll at once and leave in any order: one shared slot saved and restored around each poll could be left
     * naming a thread that no longer polls. */
    long long app_pollers;       /* threads inside the application's poll()/flush() right now */
    long long inline_pollers;    /* threads inside produce()'s inline poll right now */
    /* > 0 while a rescue purges and re-sends: no new poll may start on another thread, so every purge report
     * reaches the rescue itself (served elsewhere, its messages were re-sent late and out of order) */
    int rescue_pending;
    long long since_app_poll;    /* messages produced since the application last polled */
    long long inline_poll_every; /* then serve reports inline (queued for the app's next poll) */
    long long queue_max_messages; /* queue.buffering.max.messages: queued reports count against it (queue_full) */
    long long inline_polls;      /* how often that happened */
    long long direct_reports;    /* reports whose callback ran straight from the app's poll (no queue) */
    long long app_polls;         /* the application's poll()/flush() rounds (the driver skips serving then) */
    long long fallbacks;         /* produce() calls handed to the Python path */
    /* What produce() reads from the last TopicSnapshot it saw (snap_view): snapshots are immutable and swapped
     * whole, so the object is the version. Strong references: the address of a freed snapshot may be reused. */
    PyObject *snap_seen;
    PyObject *snap_writable; /* its writable_set when some partition is not writable, else NULL */
    PyObject *snap_muted;    /* its muted set when some partition is not writable, else NULL */
    PyObject *snap_memo;     /* its reroute_memo (key -> fallback partition) when some partition is muted */
    PyObject *reroutes;      /* the producer's keyed moves since the driver's last tick, (topic, home) -> {target: n};
                              * NULL: keyed messages of a muted home always take the Python path */
    long snap_count;
    int snap_probing; /* a muted partition is half-open: Python may have to grant a probe (see Tally.defer_probes) */
    /* A list while a rescue collects its purge reports (Rescuer._purge_and_redispatch), else NULL: a purged
     * fast-path message is counted and appended here as (enqueued, cb, kind, msg) without a Python frame */
    PyObject *purge_sink;
    /* The report's Message type (a static type: confluent-kafka's) and its partition()/latency() methods, looked
     * up once instead of once per report */
    PyTypeObject *msg_type;
    PyObject *msg_partition;
    PyObject *msg_latency;
    /* poll(): the Python poll for every call the C one does not serve itself, the converter of confluent-kafka's
     * lost KeyboardInterrupt (None: nothing to convert), and whether the driver failed (Python raises it) */
    PyObject *slow_poll;
    PyObject *poll_error;
    int broken;
    /* flush(): the Python flush for every call the C one leaves, len(producer) (everything flush waits for, held
     * messages too), and how long one wait lasts before the count is taken again (Python sets it) */
    PyObject *slow_flush;
    PyObject *pending;
    PyObject *resends; /* the hold queues' re-send deque (HoldQueues.retry): with ``holds``, what else flush sees */
    PyObject *inner_flush; /* confluent_kafka.Producer.flush, bound: what flush() waits in */
    /* One-shot, set while the driver thread is parked (nothing to judge, see mutepro/producer/pacing.py): called
     * and dropped by the next produce() that hands a message to librdkafka, so the driver's next round dates it */
    PyObject *on_send;
} FastPath;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    FastPath *fp;
    PyObject *cb; /* the application's delivery callback or Py_None */
    Tally *tally;
    /* the message's headers (NULL: none, and the reporter is shared): a delivery report carries no headers,
     * and a failed message that mutepro re-sends from its report must keep them */
    PyObject *headers;
    /* the message's kind (mutepro.producer.message: 0 NORMAL, RESCUED, ...), passed on with a failed report */
    long kind;
    /* The partition every message of this reporter was produced to, or -1 (ask the report). The fast path hands
     * librdkafka an explicit partition, which it never changes, so a reporter per partition knows it without
     * calling msg.partition() once per delivery (about a quarter of a report's added cost). */
    long partition;
    /* A shared reporter's per-partition reporters (children[p] for partition p, NULL until first used); NULL on
     * the children themselves and on per-message reporters. */
    PyObject **children;
    Py_ssize_t nchildren;
} Reporter;

static PyTypeObject FastPath_Type;
static PyTypeObject Reporter_Type;

static PyObject *S_partition, *S_latency, *S_muted, *S_probing, *S_writable_set, *S_partition_count, *S_on_delivery, *S_timestamp,
    *S_headers, *S_callback, *S_value, *S_key, *S_waiters, *S_wake, *S_extend, *S_set_headers, *S_reroute_memo, *S_code, *S_timeout, *S_serving, *S_serve, *ZERO, *MINUS_ONE;

/* -- per-thread poll state ------------------------------------------------------------------------------ */

/* Each thread keeps a short list of (producer, state) for the producers it is polling right now (usually none
 * or one). One process-wide thread-specific key, not one per producer: pthread keys are limited (1,024), an
 * application may hold more producers than that over its life. Only the owning thread touches its list; the
 * producer pointer is a key, never dereferenced. */
typedef struct PollFrame {
    const void *fp;
    uintptr_t state; /* (depth << 1) | direct */
    struct PollFrame *next;
} PollFrame;

static Py_tss_t poll_key = Py_tss_NEEDS_INIT;

static uintptr_t poll_state_get(const void *fp) {
    for (PollFrame *f = PyThread_tss_get(&poll_key); f != NULL; f = f->next)
        if (f->fp == fp)
            return f->state;
    return 0;
}

static int poll_state_set(const void *fp, uintptr_t state) {
    PollFrame *head = PyThread_tss_get(&poll_key), *prev = NULL;
    for (PollFrame *f = head; f != NULL; prev = f, f = f->next) {
        if (f->fp != fp)
            continue;
        if (state != 0) {
            f->state = state;
            return 0;
        }
        if (prev != NULL)
            prev->next = f->next;
        else
            head = f->next;
        PyMem_RawFree(f);
        return PyThread_tss_set(&poll_key, head) == 0 ? 0 : -1;
    }
    if (state == 0)
        return 0;
    PollFrame *f = PyMem_RawMalloc(sizeof(*f));
    if (f == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    f->fp = fp;
    f->state = state;
    f->next = head;
    if (PyThread_tss_set(&poll_key, f) != 0) {
        PyMem_RawFree(f);
        PyErr_SetString(PyExc_RuntimeError, "mutepro: could not record this thread's poll state");
        return -1;
    }
    return 0;
}

static double monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_MONOTONIC read at the last timer tick (1-4 ms behind, never ahead): ~2.5 ns against ~20 ns for the
 * precise clock on this project's machines. Same timeline, so "coarse >= deadline" implies "now >= deadline". */
static double coarse_monotonic_s(void) {
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#else
    return monotonic_s();
#endif
}

/* Store three new values in three cache slots (references stolen; NULL allowed), then drop the old ones. In this
 * order because dropping a reference may run a finalizer that calls back into the producer: it must find every
 * slot already consistent, never one freed value still in place. */
static void replace3(PyObject **a, PyObject *va, PyObject **b, PyObject *vb, PyObject **c, PyObject *vc) {
    PyObject *old_a = *a, *old_b = *b, *old_c = *c;
    *a = va;
    *b = vb;
    *c = vc;
    Py_XDECREF(old_a);
    Py_XDECREF(old_b);
    Py_XDECREF(old_c);
}

/* -- Reporter: the delivery callback handed to librdkafka for fast-path messages ------------------------- */

/* A failed or purged message's report gets its headers back (a delivery report carries none), as the list
 * confluent-kafka's produce() takes: it may be re-sent from the report. 0, or -1 on error. */
static int restore_headers(Reporter *self, PyObject *msg) {
    if (self->headers == NULL)
        return 0;
    PyObject *h = PyTuple_CheckExact(self->headers) ? PySequence_List(self->headers) : Py_NewRef(self->headers);
    if (h == NULL)
        return -1;
    PyObject *r = PyObject_CallMethodOneArg(msg, S_set_headers, h);
    Py_DECREF(h);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* obj.name() as a C long: 0, or -1 with an exception set */
static int long_method(PyObject *obj, PyObject *name, long *out) {
    PyObject *v = PyObject_CallMethodNoArgs(obj, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *reporter_fallback(Reporter *self, PyObject *err, PyObject *msg) {
    if (err != Py_None && restore_headers(self, msg) < 0)
        return NULL;
    PyObject *args[4] = {self->cb, NULL, err, msg};
    PyObject *kind = PyLong_FromLong(self->kind);
    if (kind == NULL)
        return NULL;
    args[1] = kind;
    PyObject *r = PyObject_Vectorcall(self->fp->on_report, args, 4, NULL);
    Py_DECREF(kind);
    return r;
}

/* 1 when fp->msg_partition/msg_latency are the methods of msg's type (looked up once per type), 0 to call
 * them by name. Only for static types: a class defined in Python may have its methods replaced at any time. */
static int message_methods(FastPath *fp, PyObject *msg) {
    PyTypeObject *tp = Py_TYPE(msg);
    if (tp == fp->msg_type)
        return 1;
    if (tp->tp_flags & Py_TPFLAGS_HEAPTYPE)
        return 0;
    PyObject *part = PyObject_GetAttr((PyObject *)tp, S_partition);
    PyObject *lat = part != NULL ? PyObject_GetAttr((PyObject *)tp, S_latency) : NULL;
    if (lat == NULL || !PyCallable_Check(part) || !PyCallable_Check(lat)) {
        PyErr_Clear();
        Py_XDECREF(part);
        Py_XDECREF(lat);
        return 0;
    }
    Py_INCREF(tp);
    replace3((PyObject **)&fp->msg_type, (PyObject *)tp, &fp->msg_partition, part, &fp->msg_latency, lat);
    return 1;
}

/* mutepro.producer.message.EXPLICIT: partition= given by the application, never moved (a rescue requeues it) */
#define KIND_EXPLICIT 1
#define KIND_UNCOUNTED 2 /* mutepro.producer.message.UNCOUNTED: no tally (librdkafka partitions it, or untracked) */
#define KIND_PROBE 4 /* mutepro.producer.message.PROBE: its success answers the breaker (Python's probe_result) */

/* librdkafka's purge errors (RD_KAFKA_RESP_ERR__PURGE_QUEUE, __PURGE_INFLIGHT) */
#define ERR_PURGE_QUEUE (-152)
#define ERR_PURGE_INFLIGHT (-151)

/* A report while a rescue collects its purge (fp->purge_sink set): a purged message is counted as reported and
 * appended to the sink as (enqueued, cb, kind, msg), what ReportHandler + Rescuer.on_purged do in Python.
 * Returns 1 when taken, 0 for any other report (the caller goes on), -1 on error. Why: a stall's rescue takes
 * back tens of thousands of messages while every producing thread waits, and four Python frames per purge
 * report were part of its cost (benchmarks/rescue_cost.py: 11.6 -> 8.2 us a message with FastPath.send). */
static int purge_report(Reporter *self, PyObject *err, PyObject *msg) {
    FastPath *fp = self->fp;
    long code, p;
    if (long_method(err, S_code, &code) < 0)
        return -1;
    if (code != ERR_PURGE_QUEUE && code != ERR_PURGE_INFLIGHT)
        return 0;
    PyObject *pobj = PyObject_CallMethodNoArgs(msg, S_partition);
    if (pobj == NULL)
        return -1;
    p = pobj == Py_None ? -1 : PyLong_AsLong(pobj); /* None: librdkafka's unassigned queue (an uncounted send) */
    Py_DECREF(pobj);
    if ((p == -1 && PyErr_Occurred()) || restore_headers(self, msg) < 0)
        return -1;
    PyObject *lat = PyObject_CallMethodNoArgs(msg, S_latency);
    if (lat == NULL)
        return -1;
    PyObject *enqueued;
    double l = lat == Py_None ? -1.0 : PyFloat_AsDouble(lat);
    Py_DECREF(lat);
    if (l == -1.0 && PyErr_Occurred())
        return -1;
    if (l >= 0.0) {
        enqueued = PyFloat_FromDouble(monotonic_s() - l); /* message.enqueued_at: now - latency, CLOCK_MONOTONIC */
        if (enqueued == NULL)
            return -1;
    } else {
        enqueued = Py_NewRef(Py_None);
    }
    PyObject *kind = PyLong_FromLong(self->kind);
    PyObject *cb = self->cb;
    PyObject *entry = kind != NULL ? PyTuple_Pack(4, enqueued, cb, kind, msg) : NULL;
    Py_DECREF(enqueued);
    Py_XDECREF(kind);
    if (entry == NULL)
        return -1;
    int rc = PyList_Append(fp->purge_sink, entry);
    Py_DECREF(entry);
    if (rc < 0)
        return -1;
    Tally *t = self->tally;
    fp->counts->reported_total++;
    if (t != NULL && p >= 0 && p < t->count)
        t->cells[p * NFIELDS + COL_REPORTED]++;
    return 1;
}

static PyObject *Reporter_vectorcall(Reporter *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a delivery report takes (err, msg)");
        return NULL;
    }
    PyObject *err = args[0], *msg = args[1];
    FastPath *fp = self->fp;
    if (err != Py_None) {
        if (fp->purge_sink != NULL) {
            int taken = purge_report(self, err, msg);
            if (taken != 0)
                return taken < 0 ? NULL : Py_NewRef(Py_None);
        }
        return reporter_fallback(self, err, msg);
    }
    if (self->kind & (KIND_PROBE | KIND_UNCOUNTED))
        return reporter_fallback(self, err, msg);
    int cached = message_methods(fp, msg);
    long p = self->partition;
    if (p < 0) {
        PyObject *pobj = cached ? PyObject_Vectorcall(fp->msg_partition, &msg, 1, NULL)
                                : PyObject_CallMethodNoArgs(msg, S_partition);
        if (pobj == NULL)
            return NULL;
        p = PyLong_AsLong(pobj);
        Py_DECREF(pobj);
        if (p == -1 && PyErr_Occurred())
            return NULL;
    }
    Tally *t = self->tally;
    if (p < 0 || p >= t->count)
        return reporter_fallback(self, err, msg);
    long long *row = t->cells + p * NFIELDS;
    /* Judged only once the partition is warm: its first delivery marks everything sent until then as not judged
     * (those messages waited for metadata and a fresh connection: 3,000 queued messages on a cold start can all
     * take > 500 ms, which says nothing about the partition's health). The one place of this rule; here rather
     * than in Python: over 1,200 partitions a saturated start has each partition's first
     * deliveries spread over seconds, and each one sent to Python queued the rest of its poll's callbacks behind
     * it (77 % of 4M reports went through the Python queue in one run). */
    int judged = row[COL_WARM] >= 0 && row[COL_REPORTED] >= row[COL_WARM];
    if (row[COL_WARM] < 0)
        row[COL_WARM] = row[COL_SENT];
    row[COL_REPORTED]++;
    fp->counts->reported_total++;
    fp->counts->delivered++;
    if (judged) {
        row[COL_OK]++;
        PyObject *lat = cached && fp->msg_type == Py_TYPE(msg) ? PyObject_Vectorcall(fp->msg_latency, &msg, 1, NULL)
                                                                 : PyObject_CallMethodNoArgs(msg, S_latency);
        if (lat == NULL)
            return NULL;
        if (lat != Py_None) {
            double l = PyFloat_AsDouble(lat);
            if (l == -1.0 && PyErr_Occurred()) {
                Py_DECREF(lat);
                return NULL;
            }
            if (l > t->slow_s)
                row[COL_SLOW]++;
        }
        Py_DECREF(lat);
    }
    /* served inside the application's own poll()/flush() on this thread (not produce()'s inline poll, not the
     * driver's): its callback may run right here */
    int direct = (poll_state_get(fp) & 1) != 0;
    if (self->cb == Py_None || fp->only_errors) {
        if (direct)
            fp->direct_reports++; /* an event that poll() served, as the plain client counts it */
    } else {
        /* Straight to the application's callback when nothing older is queued (callbacks keep their order);
         * otherwise queued for its next poll, as CallbackQueue.put_report does: one atomic deque.extend of
         * (marker, cb, msg). */
        if (direct && PyObject_Length(fp->queue_items) == 0) {
            fp->direct_reports++;
            PyObject *cargs[2] = {Py_None, msg};
            return PyObject_Vectorcall(self->cb, cargs, 2, NULL);
        }
        /* The message waits here for the application's poll(): with a loop that polls only on BufferError, up to
         * queue.buffering.max.messages of them at once (100,000), each a container the cyclic collector would
         * visit in every collection while it waits, and the ones it promotes again in the older generations:
         * 2.2 s of a 10 s saturated run went to the collector (1,900 collections; the plain client, whose
         * messages live only inside its poll, made none), ~1.5 us a message. A waiting message is in no cycle
         * (it refers to its topic, key, value, headers and error, none of which refers back to it), so it is
         * untracked here and tracked again right before its callback runs (CallbackQueue: mutepro.producer.
         * _fastpath.retrack), from where on it is the object the plain client hands out. */
        PyObject *marker = fp->report_marker;
        if (cached && Py_TYPE(msg) == fp->msg_type && PyObject_IS_GC(msg) && PyObject_GC_IsTracked(msg)) {
            PyObject_GC_UnTrack(msg);
            marker = fp->untracked_marker;
        }
        PyObject *entry = PyTuple_Pack(3, marker, self->cb, msg);
        if (entry == NULL)
            return NULL;
        PyObject *r = PyObject_CallMethodOneArg(fp->queue_items, S_extend, entry);
        Py_DECREF(entry);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    }
    /* wake poll()/flush() waiters (flush may be waiting for the count to reach zero) */
    PyObject *waiters = PyObject_GetAttr(fp->queue, S_waiters);
    if (waiters == NULL)
        return NULL;
    int any = PyObject_IsTrue(waiters);
    Py_DECREF(waiters);
    if (any < 0)
        return NULL;
    if (any)
        return PyObject_CallMethodNoArgs(fp->queue, S_wake);
    Py_RETURN_NONE;
}

static PyObject *Reporter_repr(Reporter *self) {
    return PyUnicode_FromFormat("<mutepro reporter for %R>", self->cb);
}

static int Reporter_traverse(Reporter *self, visitproc visit, void *arg) {
    Py_VISIT(self->fp);
    Py_VISIT(self->cb);
    Py_VISIT(self->tally);
    Py_VISIT(self->headers);
    for (Py_ssize_t i = 0; i < self->nchildren; i++)
        Py_VISIT(self->children[i]);
    return 0;
}

static int Reporter_clear(Reporter *self) {
    /* the array is detached first: dropping a child may run code that reaches this reporter again */
    PyObject **children = self->children;
    Py_ssize_t n = self->nchildren;
    self->children = NULL;
    self->nchildren = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(children[i]);
    PyMem_Free(children);
    Py_CLEAR(self->fp);
    Py_CLEAR(self->cb);
    Py_CLEAR(self->tally);
    Py_CLEAR(self->headers);
    return 0;
}

static void Reporter_dealloc(Reporter *self) {
    PyObject_GC_UnTrack(self);
    Reporter_clear(self);
    PyObject_GC_Del(self);
}

static PyTypeObject Reporter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mutepro.producer._fastpath.Reporter",
    .tp_basicsize = sizeof(Reporter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The delivery callback librdkafka calls for a fast-path message.",
    .tp_vectorcall_offset = offsetof(Reporter, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor)Reporter_dealloc,
    .tp_traverse = (traverseproc)Reporter_traverse,
    .tp_clear = (inquiry)Reporter_clear,
    .tp_repr = (reprfunc)Reporter_repr,
};

/* 1 when the cyclic GC can never find a cycle through o: str, bytes and None hold no references. */
static int atomic_value(PyObject *o) {
    return o == Py_None || PyUnicode_CheckExact(o) || PyBytes_CheckExact(o);
}

/* What a per-message reporter keeps of the message's headers (new reference). A list of (str, bytes) pairs, the
 * usual form, is kept as a tuple of the same pairs with the GC told not to track them: a saturated writer has
 * ~250k messages outstanding, and with their header lists, pairs and reporters tracked every collection of the
 * older generations walked about a million live objects -- measured on the Spark sink's loop (1M rows, two
 * headers each): 6.8-7.1 us per row against 4.1-4.6 us with the collector off. Immutable tuples of atomic
 * values cannot be part of a cycle, which is what CPython's own collector concludes when it untracks such a
 * tuple lazily; here it is done at once. Anything else (a dict, pairs of other types) is kept as given. */
static PyObject *frozen_headers(PyObject *h) {
    if (!PyList_CheckExact(h))
        return Py_NewRef(h);
    Py_ssize_t n = PyList_GET_SIZE(h);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(h, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(item, 0))
            || !atomic_value(PyTuple_GET_ITEM(item, 1)))
            return Py_NewRef(h);
    }
    PyObject *t = PyList_AsTuple(h);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(t, i);
        if (PyObject_GC_IsTracked(item))
            PyObject_GC_UnTrack(item);
    }
    PyObject_GC_UnTrack(t);
    return t;
}

static Reporter *reporter_new(FastPath *fp, PyObject *cb, Tally *tally, PyObject *headers, long kind, int tracked) {
    PyObject *kept = NULL;
    if (headers != NULL && (kept = frozen_headers(headers)) == NULL)
        return NULL;
    Reporter *r = PyObject_GC_New(Reporter, &Reporter_Type);
    if (r == NULL) {
        Py_XDECREF(kept);
        return NULL;
    }
    r->vectorcall = (vectorcallfunc)Reporter_vectorcall;
    Py_INCREF(fp);
    r->fp = fp;
    Py_INCREF(cb);
    r->cb = cb;
    Py_XINCREF(tally); /* NULL: an uncounted message (FastPath.send), whose reports all go on to Python */
    r->tally = tally;
    r->headers = kept;
    r->kind = kind;
    r->partition = -1;
    r->children = NULL;
    r->nchildren = 0;
    /* ``tracked``: the caller's choice. A per-message reporter (headers, a kind) is referenced by librdkafka's
     * message only, which the collector cannot see: no cycle it could find goes through it, and tracking it costs
     * every collection a visit per outstanding message. The shared reporters are tracked: the producer's cache
     * refers to them. */
    if (tracked)
        PyObject_GC_Track(r);
    return r;
}

/* The shared reporter ``parent``'s reporter for partition p (a new reference), made on first use. Partitions
 * only grow, so the array does too; at most one reporter per (callback, topic, kind, partition) lives. Sets
 * *ran_python when it made one (allocating may run the collector, and so Python code). */
static PyObject *partition_reporter(Reporter *parent, long p, int *ran_python) {
    if (p < parent->nchildren && parent->children[p] != NULL)
        return Py_NewRef(parent->children[p]);
    *ran_python = 1;
    /* made first: allocating may run the collector and so finalizers, which may produce and fill the slot */
    Reporter *child = reporter_new(parent->fp, parent->cb, parent->tally, NULL, parent->kind, 1);
    if (child == NULL)
        return NULL;
    child->partition = p;
    if (p >= parent->nchildren) {
        Py_ssize_t n = Py_MAX((Py_ssize_t)p + 1, (Py_ssize_t)parent->tally->count);
        PyObject **grown = PyMem_Realloc(parent->children, (size_t)n * sizeof(PyObject *));
        if (grown == NULL) {
            Py_DECREF(child);
            PyErr_NoMemory();
            return NULL;
        }
        for (Py_ssize_t i = parent->nchildren; i < n; i++)
            grown[i] = NULL;
        parent->children = grown;
        parent->nchildren = n;
    }
    if (parent->children[p] != NULL) { /* filled meanwhile */
        Py_DECREF(child);
        return Py_NewRef(parent->children[p]);
    }
    parent->children[p] = Py_NewRef((PyObject *)child);
    return (PyObject *)child;
}

/* Forget the identity cache. The old references are dropped last: dropping one may run a finalizer (a
 * callback's __del__) that produces and so re-enters fastpath_reporter, which must find a consistent cache. */
static void reporter_cache_reset(FastPath *fp) {
    replace3(&fp->last_cb, NULL, &fp->last_topic, NULL, &fp->last_reporter, NULL);
}

/* Drop every cached reporter: a fresh dict goes in first, then the cache is reset and the old dict dropped,
 * so a finalizer run by the drop sees an empty, valid cache. */
static int reporters_reset(FastPath *fp) {
    PyObject *fresh = PyDict_New();
    if (fresh == NULL)
        return -1;
    PyObject *old = fp->reporters;
    fp->reporters = fresh;
    reporter_cache_reset(fp);
    Py_XDECREF(old);
    return 0;
}

/* The Reporter for (cb, topic) and kind (0, or KIND_EXPLICIT), a new reference. Sets *ran_python unless the
 * identity cache answered (the dict hashes and compares the callback, which may run Python code). */
static PyObject *fastpath_reporter(FastPath *fp, PyObject *cb, PyObject *topic, Tally *tally, long kind,
                                   int *ran_python) {
    if (cb == fp->last_cb && topic == fp->last_topic && kind == fp->last_kind && fp->last_reporter != NULL) {
        Py_INCREF(fp->last_reporter);
        return fp->last_reporter;
    }
    *ran_python = 1;
    if (PyDict_GET_SIZE(fp->reporters) >= 512 && reporters_reset(fp) < 0) /* a fresh lambda per message */
        return NULL;
    PyObject *key = kind == 0 ? PyTuple_Pack(2, cb, topic) : Py_BuildValue("(OOl)", cb, topic, kind);
    if (key == NULL)
        return NULL;
    PyObject *rep = PyDict_GetItemWithError(fp->reporters, key);
    if (rep == NULL) {
        if (PyErr_Occurred()) { /* an unhashable callback: the Python path copes */
            Py_DECREF(key);
            return NULL;
        }
        Reporter *r = reporter_new(fp, cb, tally, NULL, kind, 1); /* shared through the cache: tracked */
        if (r == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        int rc = PyDict_SetItem(fp->reporters, key, (PyObject *)r);
        Py_DECREF(r);
        if (rc < 0) {
            Py_DECREF(key);
            return NULL;
        }
        rep = (PyObject *)r;
    }
    Py_DECREF(key);
    Py_INCREF(rep); /* the caller's reference (hashing cb above may have run Python code: nothing is borrowed) */
    Py_INCREF(cb);
    Py_INCREF(topic);
    Py_INCREF(rep);
    replace3(&fp->last_cb, cb, &fp->last_topic, topic, &fp->last_reporter, rep);
    fp->last_kind = kind;
    return rep;
}

/* -- FastPath.produce ------------------------------------------------------------------------------------ */

/* One message of ``size`` value bytes handed to librdkafka for partition p of tally t: counted. */
static void count_sent(FastPath *fp, Tally *t, long p, Py_ssize_t size) {
    long long *row = t->cells + p * NFIELDS;
    row[COL_SENT]++;
    row[COL_SENT_BYTES] += size;
    fp->counts->sent_total++;
}

/* One more message produced: every inline_poll_every of them while the application does not poll, serve
 * librdkafka's reports here (queued for its next poll) so they do not pile up until the driver's next tick. The
 * one counter and rule for every produce(), the fast path's and the slow path's messages alike. Never from
 * inside a poll on this thread (a delivery callback that produces): confluent-kafka's poll() nested in its own
 * callback loses the outer call's state and aborts the process. Marked as a poll of this thread, not the
 * application's: callbacks are queued, so a callback never runs inside produce(). 0, or -1 with an exception
 * (the message went to librdkafka all the same: an exception here is Ctrl-C or a callback's). */
static int inline_poll(FastPath *fp) {
    if (++fp->since_app_poll < fp->inline_poll_every || poll_state_get(fp) != 0 || fp->rescue_pending)
        return 0;
    fp->since_app_poll = 0;
    fp->inline_polls++;
    if (poll_state_set(fp, 2) < 0)
        return -1;
    fp->inline_pollers++;
    PyObject *pr = PyObject_CallOneArg(fp->inner_poll, ZERO);
    fp->inline_pollers--;
    if (poll_state_set(fp, 0) < 0)
        PyErr_Clear(); /* removing an entry allocates nothing; cannot fail in practice */
    if (pr == NULL)
        return -1;
    Py_DECREF(pr);
    return 0;
}

/* Messages in librdkafka plus callbacks queued for the application (``items``: the queue's deque length, three
 * items per callback, rounded up as CallbackQueue.__len__ does): what is pending when nothing is held, awaiting a
 * re-send or in a rescue's hands. Read by produce()'s queue bound and flush()'s count. */
static Py_ssize_t plain_pending(FastPath *fp, Py_ssize_t items) {
    long long outstanding = fp->counts->sent_total - fp->counts->reported_total;
    return (Py_ssize_t)(outstanding > 0 ? outstanding : 0) + (items + 2) / 3;
}

/* A delivery report served early -- by produce()'s inline poll or the driver's tick, queued for the application's
 * next poll() -- still holds its message's place in queue.buffering.max.messages, as librdkafka holds it until the
 * application's poll() serves the report. 1 when produce() must raise BufferError as the plain client would: some
 * reports are queued and, with the messages outstanding in librdkafka, they fill the queue. Why: a loop that polls
 * only when produce() raises BufferError (confluent-kafka's documented pattern) never got one while the inline
 * poll moved every report into the Python queue, which grew without bound between its rare polls: a 10 s closed
 * loop of 512-byte values (3 brokers, RF 3, acks=all, the default 100,000) had 1,281,024 messages waiting for the
 * application at once and no BufferError, at 0.72x the plain client's rate. When nothing is queued librdkafka's
 * own count is the exact one and decides alone. 0 when not full, -1 with an exception. */
static int queue_full(FastPath *fp) {
    if (fp->queue_max_messages <= 0)
        return 0;
    Py_ssize_t items = PyObject_Length(fp->queue_items);
    if (items <= 0)
        return items < 0 ? -1 : 0;
    return plain_pending(fp, items) >= fp->queue_max_messages;
}

/* queue_full() as the plain client's produce() answers a full queue: BufferError with librdkafka's words. 0, or -1
 * with an exception (BufferError, or what reading the queue raised). */
static int raise_if_queue_full(FastPath *fp) {
    int full = queue_full(fp);
    if (full > 0)
        PyErr_SetString(PyExc_BufferError, "Local: Queue full"); /* rd_kafka_err2str(RD_KAFKA_RESP_ERR__QUEUE_FULL) */
    return full != 0 ? -1 : 0;
}

static PyObject *slow(FastPath *fp, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    fp->fallbacks++;
    PyObject *r = PyObject_Vectorcall(fp->slow_produce, args, PyVectorcall_NARGS(nargsf), kwnames);
    if (r != NULL && !fp->closed && inline_poll(fp) < 0) /* the slow path's messages count as the fast path's */
        Py_CLEAR(r);
    return r;
}

/* snapshots[topic] (borrowed), or NULL with or without an exception set.
 *
 * Why a cache: the lookup was the fast path's costliest single step (~110 instructions of ~600 under callgrind,
 * a saturated positional loop on librdkafka's mock cluster), for a dict that changes a few times a second (the
 * weight refresh, mutes). CPython 3.11 gives every dict a version that changes with every write (PEP 509), so
 * "same topic object, same version" means "same entry". Later Pythons deprecate that field: they look up. */
#if PY_VERSION_HEX < 0x030C0000
#define MUTEPRO_DICT_VERSION(d) (((PyDictObject *)(d))->ma_version_tag)
#endif
static PyObject *snapshot_of(FastPath *fp, PyObject *topic) {
#ifdef MUTEPRO_DICT_VERSION
    uint64_t version = MUTEPRO_DICT_VERSION(fp->snapshots);
    if (topic == fp->snapc_topic && version == fp->snapc_version && fp->snapc_snap != NULL)
        return fp->snapc_snap;
#endif
    PyObject *snap = PyDict_GetItemWithError(fp->snapshots, topic); /* str keys: runs no Python code */
#ifdef MUTEPRO_DICT_VERSION
    if (snap != NULL) {
        Py_INCREF(topic);
        Py_XSETREF(fp->snapc_topic, topic); /* dropping a str runs no Python code */
        fp->snapc_snap = snap;
        fp->snapc_version = version;
    }
#endif
    return snap;
}

/* The sticky rule, once (KIP-480 / librdkafka's sticky.partitioning.linger.ms): a topic's stick, kept in its
 * Tally, holds while it is before its deadline and under sticky_bytes (0: no byte limit) -- and its partition is
 * still writable, which the callers check -- and a new pick starts a stick of linger_s (0: none, every message
 * draws anew). sticky_choose (the fast path, on CLOCK_MONOTONIC) and Tally.choose_sticky (Python's
 * StickyChooser, on any clock: ``now`` is an argument) both go through these two. */
static int stick_in_bytes(Tally *t, long long sticky_bytes) {
    return t->stick_partition >= 0 && (sticky_bytes == 0 || t->stick_sent < sticky_bytes);
}

static void stick_start(Tally *t, long p, double now, double linger_s, Py_ssize_t size) {
    if (linger_s > 0) {
        t->stick_partition = p;
        t->stick_deadline = now + linger_s;
        t->stick_sent = size;
        t->stick_stride = Py_MIN(t->stick_msgs / 64, 64);
        t->stick_skip = t->stick_stride;
        t->stick_msgs = 1;
    } else {
        t->stick_partition = -1;
    }
}

/* choose_sticky(snap, size, now, sticky_bytes, linger_s, pick): the partition of an unkeyed message of ``size``
 * bytes at ``now`` (any clock, the same for every call on this tally), or None when nothing is writable: the
 * stick when it holds and snap.writable_set has it, else pick(snap) -- a new stick. */
static PyObject *Tally_choose_sticky(Tally *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "choose_sticky(snap, size, now, sticky_bytes, linger_s, pick)");
        return NULL;
    }
    PyObject *snap = args[0], *pick = args[5];
    Py_ssize_t size = PyLong_AsSsize_t(args[1]);
    double now = PyFloat_AsDouble(args[2]);
    long long sticky_bytes = PyLong_AsLongLong(args[3]);
    double linger_s = PyFloat_AsDouble(args[4]);
    if (PyErr_Occurred())
        return NULL;
    long sp = self->stick_partition;
    if (stick_in_bytes(self, sticky_bytes > 0 ? sticky_bytes : 0) && now < self->stick_deadline) {
        PyObject *writable = PyObject_GetAttr(snap, S_writable_set);
        if (writable == NULL)
            return NULL;
        PyObject *pobj = PyLong_FromLong(sp);
        int ok = pobj != NULL ? PySequence_Contains(writable, pobj) : -1;
        Py_DECREF(writable);
        if (ok < 0) {
            Py_XDECREF(pobj);
            return NULL;
        }
        if (ok) {
            self->stick_sent += size;
            self->stick_msgs++;
            self->stick_skip = self->stick_stride; /* a precise read, as the fast path's */
            return pobj;
        }
        Py_DECREF(pobj);
    }
    PyObject *r = PyObject_CallOneArg(pick, snap);
    if (r == NULL)
        return NULL;
    if (r == Py_None) {
        self->stick_partition = -1;
        return r;
    }
    long p = PyLong_AsLong(r);
    if (p == -1 && PyErr_Occurred()) {
        Py_DECREF(r);
        return NULL;
    }
    stick_start(self, p, now, linger_s, size);
    return r;
}

/* Choose the sticky partition for an unkeyed message; -1 when the Python path must decide (nothing writable,
 * a Python exception, or the world changed while pick() ran). */
static long sticky_choose(FastPath *fp, PyObject *topic, PyObject *snap, Tally *t, long count, Py_ssize_t size,
                          PyObject *writable_set, int *ran_python) {
    /* The sticky partition lasts linger_s. Reading the precise clock for every message cost ~20 ns, 2 % of a
     * saturated positional loop's whole per-message time (~1 us). So after a precise read says "still in time",
     * the next stick_stride messages only read the coarse clock, which can tell "past the deadline" but not
     * "before" it: they stay unless it says past. The stride is the last stick's message count / 64, at most 64:
     * at 500,000 msg/s and linger 5 ms a stick takes ~2,500 messages, so the clock is read every 39 and a stick
     * ends at most 39 messages (~80 us) late; a slow producer (a stick of < 64 messages) reads it every time,
     * and however slow the messages come, the coarse clock ends a stick at most one timer tick late. */
    double now = 0.0;
    long sp = t->stick_partition;
    int in_time = 0;
    if (sp < count && stick_in_bytes(t, fp->sticky_bytes)) {
        if (t->stick_skip > 0 && coarse_monotonic_s() < t->stick_deadline) {
            t->stick_skip--;
            in_time = 1;
        } else {
            now = monotonic_s();
            in_time = now < t->stick_deadline;
            t->stick_skip = t->stick_stride;
        }
    }
    if (in_time) {
        int ok = 1;
        if (writable_set != NULL) { /* something is muted: the sticky partition must still be writable */
            PyObject *pobj = PyLong_FromLong(sp);
            if (pobj == NULL)
                return -1;
            ok = PySet_Contains(writable_set, pobj);
            Py_DECREF(pobj);
            if (ok < 0) {
                PyErr_Clear();
                return -1;
            }
        }
        if (ok) {
            t->stick_sent += size;
            t->stick_msgs++;
            return sp;
        }
    }
    *ran_python = 1;
    PyObject *r = PyObject_CallOneArg(fp->picker, snap);
    if (r == NULL) {
        PyErr_Clear(); /* the Python path will call the chooser again and raise properly */
        return -1;
    }
    if (r == Py_None) {
        Py_DECREF(r);
        return -1;
    }
    long p = PyLong_AsLong(r);
    Py_DECREF(r);
    if (p == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    /* pick() ran Python code, so another thread may have run: check again what the caller checked */
    if (fp->gate || fp->closed || snapshot_of(fp, topic) != snap) {
        PyErr_Clear();
        return -1;
    }
    if (now == 0.0 && fp->linger_s > 0)
        now = monotonic_s();
    stick_start(t, p, now, fp->linger_s, size);
    return p;
}

/* Read what produce() needs from ``snap`` into fp->snap_* (unless it is the snapshot seen last): its partition
 * count, and -- when some partition is not writable (muted or avoided) -- its writable and muted sets and
 * whether one is half-open. Returns -1 (exception cleared) for anything unexpected: the caller goes to Python. */
static int snap_view(FastPath *fp, PyObject *snap) {
    if (snap == fp->snap_seen)
        return 0;
    PyObject *writable = NULL, *muted = NULL, *memo = NULL;
    int probing = 0;
    PyObject *cnt = PyObject_GetAttr(snap, S_partition_count);
    if (cnt == NULL)
        goto fail;
    long count = PyLong_AsLong(cnt);
    Py_DECREF(cnt);
    if (count <= 0)
        goto fail;
    writable = PyObject_GetAttr(snap, S_writable_set);
    if (writable == NULL || !PyAnySet_Check(writable))
        goto fail;
    if (PySet_GET_SIZE(writable) == count) {
        Py_CLEAR(writable); /* every partition writable: nothing to check per message */
    } else {
        muted = PyObject_GetAttr(snap, S_muted);
        if (muted == NULL || !PyAnySet_Check(muted))
            goto fail;
        if (PySet_GET_SIZE(muted) != 0) {
            PyObject *half_open = PyObject_GetAttr(snap, S_probing);
            if (half_open == NULL)
                goto fail;
            Py_ssize_t n = PyObject_Length(half_open);
            Py_DECREF(half_open);
            if (n < 0)
                goto fail;
            probing = n != 0;
            memo = PyObject_GetAttr(snap, S_reroute_memo);
            if (memo == NULL)
                PyErr_Clear(); /* a snapshot without a memo: keyed messages of muted homes go to Python */
            else if (!PyDict_CheckExact(memo))
                Py_CLEAR(memo);
        }
    }
    fp->snap_count = count;
    fp->snap_probing = probing;
    Py_INCREF(snap);
    PyObject *old_memo = fp->snap_memo;
    fp->snap_memo = memo;
    replace3(&fp->snap_seen, snap, &fp->snap_writable, writable, &fp->snap_muted, muted);
    Py_XDECREF(old_memo);
    return 0;
fail:
    PyErr_Clear();
    Py_XDECREF(writable);
    Py_XDECREF(muted);
    Py_XDECREF(memo);
    return -1;
}

/* reroutes[(topic, home)][target] += 1: what the driver reports as one partition_reroute event per tick. */
static int count_move(PyObject *reroutes, PyObject *topic, long home, long target) {
    PyObject *h = PyLong_FromLong(home), *k = NULL, *moves = NULL, *tg = NULL, *n = NULL;
    int rc = -1;
    if (h == NULL || (k = PyTuple_Pack(2, topic, h)) == NULL || (tg = PyLong_FromLong(target)) == NULL)
        goto out;
    moves = Py_XNewRef(PyDict_GetItemWithError(reroutes, k));
    if (moves == NULL) {
        if (PyErr_Occurred() || (moves = PyDict_New()) == NULL || PyDict_SetItem(reroutes, k, moves) < 0)
            goto out;
    }
    PyObject *old = PyDict_GetItemWithError(moves, tg);
    if (old == NULL && PyErr_Occurred())
        goto out;
    n = PyLong_FromLong(old != NULL ? PyLong_AsLong(old) + 1 : 1);
    if (n == NULL || PyDict_SetItem(moves, tg, n) < 0)
        goto out;
    rc = 0;
out:
    Py_XDECREF(h);
    Py_XDECREF(k);
    Py_XDECREF(moves);
    Py_XDECREF(tg);
    Py_XDECREF(n);
    return rc;
}

static PyObject *FastPath_produce(FastPath *fp, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    /* produce(topic, value=None, key=None, partition=-1, on_delivery=None, timestamp=0, headers=None,
     *         *, callback=None) -- anything unusual goes to the Python produce(), which also raises for misuse */
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *a[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if (!fp->ready) {
        PyErr_SetString(PyExc_RuntimeError, "FastPath.__init__ was not called (MuteProducer builds it)");
        return NULL;
    }
    if (nargs < 1 || nargs > 7 || fp->gate || fp->closed)
        return slow(fp, args, nargsf, kwnames);
    for (Py_ssize_t i = 0; i < nargs; i++)
        a[i] = args[i];
    if (kwnames != NULL) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            int slot;
            if (name == S_value)
                slot = 1;
            else if (name == S_key)
                slot = 2;
            else if (name == S_partition)
                slot = 3;
            else if (name == S_on_delivery)
                slot = 4;
            else if (name == S_timestamp)
                slot = 5;
            else if (name == S_headers)
                slot = 6;
            else if (name == S_callback)
                slot = 7;
            else
                return slow(fp, args, nargsf, kwnames); /* not interned, or unknown: let Python sort it out */
            if (a[slot] != NULL)
                return slow(fp, args, nargsf, kwnames);
            a[slot] = args[nargs + i];
        }
    }
    PyObject *topic = a[0], *value = a[1], *key = a[2], *partition = a[3];
    if (!PyUnicode_CheckExact(topic))
        return slow(fp, args, nargsf, kwnames);
    /* partition=p (0 <= p < the topic's partitions) goes as given, as the Python path sends it (kind EXPLICIT:
     * never moved, not even to or from a muted partition); -1 is "choose for me"; anything else (another
     * negative, too large, not an int, None) goes to Python, which raises the plain client's error for it.
     * Why in C: a job writing its own partitions (partition=n % P) ran at 0.46x the plain client through Python. */
    long explicit_p = -1;
    /* -1 (a cached small int: the same object wherever it comes from) is the common explicit "choose for me" */
    if (partition != NULL && partition != MINUS_ONE) {
        if (!PyLong_CheckExact(partition))
            return slow(fp, args, nargsf, kwnames);
        explicit_p = PyLong_AsLong(partition);
        if ((explicit_p == -1 && PyErr_Occurred()) || explicit_p < -1) {
            PyErr_Clear();
            return slow(fp, args, nargsf, kwnames);
        }
    }
    PyObject *snap = snapshot_of(fp, topic);
    if (snap == NULL) {
        PyErr_Clear();
        return slow(fp, args, nargsf, kwnames);
    }
    if (PyDict_GET_SIZE(fp->holds) != 0)
        return slow(fp, args, nargsf, kwnames);
    Tally *t;
    if (topic == fp->tally_topic) {
        t = fp->tally_last; /* the tracker never replaces a topic's tally (tracker.OutstandingTracker.topics) */
    } else {
        PyObject *tally_obj = PyDict_GetItemWithError(fp->tallies, topic);
        if (tally_obj == NULL || !PyObject_TypeCheck(tally_obj, &Tally_Type)) {
            PyErr_Clear();
            return slow(fp, args, nargsf, kwnames);
        }
        t = (Tally *)tally_obj;
        PyObject *old_topic = fp->tally_topic, *old_tally = (PyObject *)fp->tally_last;
        fp->tally_topic = Py_NewRef(topic);
        fp->tally_last = (Tally *)Py_NewRef(tally_obj);
        Py_XDECREF(old_topic); /* str and Tally: dropping them runs no Python code */
        Py_XDECREF(old_tally);
    }
    if (explicit_p >= t->count)
        return slow(fp, args, nargsf, kwnames);
    Py_INCREF(snap); /* pick() may run Python code that replaces the dict entry */
    Py_INCREF(t);
    PyObject *result = NULL, *muted = NULL, *writable_set = NULL, *reporter = NULL, *memo = NULL;
    long count, home = -1;
    int ran_python = 0; /* Python code may have run since the snapshot was read (see the check before producing) */
    /* Muted partitions are fine here as long as no probe is due on a half-open one (the next message may have to
     * be its probe: Python decides) -- unkeyed messages stick to writable partitions only, and a keyed message whose home is
     * muted goes to Python for its keyed policy. Avoided partitions (closed, their leader stands out) are left
     * out of the writable set too, but keyed messages still go home to them. */
    if (snap != fp->snap_seen)
        ran_python = 1; /* snap_view reads the snapshot's attributes */
    if (snap_view(fp, snap) < 0)
        goto to_slow;
    if (explicit_p < 0 && fp->snap_probing && !(t->probe_snap == snap && monotonic_s() < t->probe_until))
        goto to_slow; /* a probe may be due: Python grants it (and defers the next ask, Tally.defer_probes) */
    count = fp->snap_count;
    writable_set = fp->snap_writable; /* own references: pick() may run Python code that replaces the view */
    muted = fp->snap_muted;
    memo = fp->reroutes != NULL ? fp->snap_memo : NULL;
    Py_XINCREF(writable_set);
    Py_XINCREF(muted);
    Py_XINCREF(memo);
    Py_ssize_t size;
    if (value == NULL || value == Py_None)
        size = 0;
    else if (PyBytes_CheckExact(value))
        size = PyBytes_GET_SIZE(value);
    else if (PyUnicode_CheckExact(value))
        size = PyUnicode_GET_LENGTH(value); /* len(value), as the Python path counts it */
    else
        goto to_slow;
    long p;
    if (explicit_p >= 0) {
        p = explicit_p;
    } else if (key == NULL || key == Py_None) {
        if (fp->picker == Py_None) {
            p = key_partition(fp->key_mode, Py_None, count); /* consistent/murmur2/fnv1a hash NULL as b"" */
        } else {
            p = sticky_choose(fp, topic, snap, t, count, size, writable_set, &ran_python);
        }
    } else {
        p = key_partition(fp->key_mode, key, count);
    }
    if (p < 0 || p >= t->count)
        goto to_slow;
    if (explicit_p < 0 && muted != NULL && ((key != NULL && key != Py_None) || fp->picker == Py_None)) {
        /* a hashed home partition: if it is muted, the keyed policy (Python) decides */
        PyObject *pobj = PyLong_FromLong(p);
        if (pobj == NULL)
            goto to_slow;
        int is_muted = PySet_Contains(muted, pobj);
        Py_DECREF(pobj);
        if (is_muted != 0) {
            /* Its keyed policy reroutes it, to the fallback the Python path chose for this key under this very
             * snapshot (reroute_memo: a pure function of key and snapshot, see mutepro.partition.reroute), or
             * Python decides. Rerouted keys cost a Python call each otherwise: ~12 us against ~1.4 us here
             * (fake producer, 1,000 keys), and a stalled broker of three reroutes a third of all keys. Keys are
             * bytes, str or None here (anything else was refused by key_partition): looking them up runs no
             * Python code. */
            PyObject *target = is_muted > 0 && memo != NULL ? PyDict_GetItemWithError(memo, key ? key : Py_None) : NULL;
            long fallback = target != NULL && PyLong_CheckExact(target) ? PyLong_AsLong(target) : -1;
            if (fallback < 0 || fallback >= t->count || fallback == p)
                goto to_slow;
            home = p;
            p = fallback;
        }
    }

    PyObject *cb = a[4];
    if (cb == NULL || cb == Py_None)
        cb = a[7];
    if (cb == NULL || cb == Py_None)
        cb = fp->default_cb;
    if (cb != Py_None && cb != fp->last_cb && !PyCallable_Check(cb))
        goto to_slow; /* the Python path raises the TypeError (last_cb passed this check when it was cached) */
    long kind = explicit_p >= 0 ? KIND_EXPLICIT : 0;
    if (a[6] != NULL && a[6] != Py_None) { /* headers: a reporter of its own keeps them for a re-send */
        reporter = (PyObject *)reporter_new(fp, cb, t, a[6], kind, 0);
        if (reporter != NULL)
            ((Reporter *)reporter)->partition = p;
        ran_python = 1;
    } else {
        PyObject *shared = fastpath_reporter(fp, cb, topic, t, kind, &ran_python);
        if (shared != NULL) {
            reporter = partition_reporter((Reporter *)shared, p, &ran_python);
            Py_DECREF(shared);
        }
    }
    if (reporter == NULL) {
        PyErr_Clear();
        goto to_slow;
    }
    /* Hashing the callback, pick() or an allocation may have run Python code (and let another thread run): check
     * again. Only then: on the common path nothing ran since the checks above, and the lookup is a tenth of the
     * fast path's own cost. */
    if (ran_python && (fp->gate || fp->closed || snapshot_of(fp, topic) != snap))
        goto to_slow;
    if (raise_if_queue_full(fp) < 0) {
        if (PyErr_ExceptionMatches(PyExc_BufferError))
            fp->counts->buffer_errors++;
        goto done;
    }
    PyObject *pobj = PyLong_FromLong(p);
    if (pobj == NULL)
        goto done;
    /* inner.produce(topic, value, key, p, reporter[, None, timestamp, headers]), all positional: confluent-kafka
     * parses keywords with PyArg_ParseTupleAndKeywords, and four keywords cost more than everything else here
     * (its positional order is topic, value, key, partition, callback, on_delivery, timestamp, headers) */
    PyObject *call[8] = {topic, value ? value : Py_None, key ? key : Py_None, pobj, reporter, Py_None,
                         a[5] ? a[5] : ZERO, a[6] ? a[6] : Py_None};
    /* headers=None given explicitly (wrappers forward it) is no header: the short call */
    Py_ssize_t ncall = (a[5] != NULL || (a[6] != NULL && a[6] != Py_None)) ? 8 : 5;
    PyObject *r = PyObject_Vectorcall(fp->inner_produce, call, ncall, NULL);
    Py_DECREF(pobj);
    if (r == NULL) {
        if (PyErr_ExceptionMatches(PyExc_BufferError))
            fp->counts->buffer_errors++;
        goto done;
    }
    Py_DECREF(r);
    count_sent(fp, t, p, size);
    fp->counts->produced++;
    if (home >= 0) {
        fp->counts->rerouted++;
        if (count_move(fp->reroutes, topic, home, p) < 0)
            PyErr_Clear(); /* the message is in librdkafka: a lost count must not make the caller retry it */
    }
    if (fp->on_send != NULL) {
        /* the driver is parked: wake it (the tracker dates a message by the first round that counts it, so a
         * round up to a second late would make this message look that much younger than it is). Like the inline
         * poll below, an exception here (Ctrl-C) propagates although the message went to librdkafka. */
        PyObject *wake = fp->on_send;
        fp->on_send = NULL;
        PyObject *w = PyObject_CallNoArgs(wake);
        Py_DECREF(wake);
        if (w == NULL)
            goto done;
        Py_DECREF(w);
    }
    if (inline_poll(fp) < 0)
        goto done;
    Py_INCREF(Py_None);
    result = Py_None;
    goto done;

to_slow:
    PyErr_Clear();
    result = slow(fp, args, nargsf, kwnames);
done:
    Py_XDECREF(reporter);
    Py_XDECREF(muted);
    Py_XDECREF(memo);
    Py_XDECREF(writable_set);
    Py_DECREF(snap);
    Py_DECREF(t);
    return result;
}

/* The sink's binary row identity: prefix + first + i as 8 bytes big-endian (prefix: the task's constant part,
 * see mutepro/spark/identity.py -- version byte, 16-byte digest of the batch label, Spark partition id). One
 * bytes object per row: 29 bytes for the sink's 21-byte prefix. Shared by produce_rows and the module's row_id(),
 * which the sink's per-row Python path calls, so that both paths write byte-identical headers. */
static PyObject *row_id_value(const char *prefix, Py_ssize_t plen, Py_ssize_t n) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, plen + 8);
    if (out == NULL)
        return NULL;
    char *p = PyBytes_AS_STRING(out);
    memcpy(p, prefix, (size_t)plen);
    unsigned long long u = (unsigned long long)n;
    for (int b = 7; b >= 0; b--) {
        p[plen + b] = (char)(u & 0xff);
        u >>= 8;
    }
    return out;
}

/* row_id(prefix, n) -> prefix + n as 8 bytes big-endian: one row's binary identity (row_id_value). */
static PyObject *py_row_id(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "row_id(prefix: bytes, n: int)");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "row_id: n must be >= 0");
        return NULL;
    }
    return row_id_value(PyBytes_AS_STRING(args[0]), PyBytes_GET_SIZE(args[0]), n);
}

/* produce_rows(topic, values, keys, fixed, name, prefix, first, begin) -> index
 *
 * The Spark sink's inner loop in C: rows values[begin:] (keys[i] with each, or no key when keys is None) go to
 * topic through FastPath_produce, exactly as produce(topic, values[i], keys[i], headers=h) would, where h is
 * - prefix bytes (the sink's default): [(name, row_id(prefix, first + i))] -- one binary identity header; fixed
 *   must be None;
 * - prefix str (the older two-string identity): [fixed, (name, f"{prefix}{first + i}")], or None when fixed is
 *   None (no identity at all).
 * Returns len(values) when every row went, or the index of the first row librdkafka's queue had no room for
 * (BufferError, cleared): the caller serves reports and calls again from there. Any other error propagates.
 *
 * Why in C: in a saturated sink task the Python loop around produce() -- the header list and its pair, the
 * f-string, the call -- cost about as much as the fast path itself (sinkloop probe, 1M rows of 512 B, two
 * headers: mutepro 3.8-4.2 us per row against the plain client's 3.2-3.4 in the same Python loop). Why one
 * binary header: each header costs the client a name and a value conversion and librdkafka a header entry per
 * row; benchmarks/identity_cost.py measures the encodings. */
static PyObject *FastPath_produce_rows(FastPath *fp, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "produce_rows(topic, values, keys, fixed, name, prefix, first, begin)");
        return NULL;
    }
    PyObject *topic = args[0], *values = args[1], *keys = args[2], *fixed = args[3], *name = args[4],
             *prefix = args[5];
    int binary = PyBytes_Check(prefix);
    if (!PyList_CheckExact(values) || (keys != Py_None && !PyList_CheckExact(keys))
        || !(binary || PyUnicode_Check(prefix)) || ((binary || fixed != Py_None) && !PyUnicode_Check(name))) {
        PyErr_SetString(PyExc_TypeError, "produce_rows: values and keys must be lists, prefix bytes or str, name str");
        return NULL;
    }
    if (binary && fixed != Py_None) {
        PyErr_SetString(PyExc_TypeError, "produce_rows: fixed must be None with a bytes prefix (one binary header)");
        return NULL;
    }
    if (keys != Py_None && PyList_GET_SIZE(keys) != PyList_GET_SIZE(values)) {
        PyErr_SetString(PyExc_ValueError, "produce_rows: keys and values differ in length");
        return NULL;
    }
    Py_ssize_t first = PyLong_AsSsize_t(args[6]), begin = PyLong_AsSsize_t(args[7]);
    if ((first == -1 || begin == -1) && PyErr_Occurred())
        return NULL;
    if (binary && first < 0) {
        PyErr_SetString(PyExc_ValueError, "produce_rows: first must be >= 0 with a bytes prefix");
        return NULL;
    }
    Py_ssize_t plen;
    const char *pre = binary ? PyBytes_AS_STRING(prefix) : PyUnicode_AsUTF8AndSize(prefix, &plen);
    if (pre == NULL)
        return NULL;
    if (binary)
        plen = PyBytes_GET_SIZE(prefix);
    if (plen > 200) {
        PyErr_SetString(PyExc_ValueError, "produce_rows: prefix longer than 200 bytes");
        return NULL;
    }
    int stamped = binary || fixed != Py_None;
    PyObject *kwnames = PyTuple_Pack(1, S_headers);
    if (kwnames == NULL)
        return NULL;
    Py_INCREF(values); /* a callback run by the slow path could drop the caller's last reference */
    Py_XINCREF(keys);
    Py_INCREF(prefix); /* row_id_value reads its buffer */
    PyObject *result = NULL;
    char buf[256];
    memcpy(buf, pre, (size_t)plen);
    Py_ssize_t i = begin < 0 ? 0 : begin;
    for (;; i++) {
        if (i >= PyList_GET_SIZE(values) || (keys != Py_None && i >= PyList_GET_SIZE(keys)))
            break;
        if ((i & 1023) == 0 && i != begin && PyErr_CheckSignals() < 0)
            goto done;
        PyObject *headers = Py_None;
        if (binary) {
            PyObject *id = row_id_value(buf, plen, first + i);
            PyObject *pair = id != NULL ? PyTuple_Pack(2, name, id) : NULL;
            Py_XDECREF(id);
            if (pair == NULL || (headers = PyList_New(1)) == NULL) {
                Py_XDECREF(pair);
                goto done;
            }
            PyList_SET_ITEM(headers, 0, pair);
        } else if (fixed != Py_None) {
            int len = snprintf(buf + plen, sizeof(buf) - (size_t)plen, "%zd", first + i);
            PyObject *row = PyUnicode_FromStringAndSize(buf, plen + len);
            PyObject *pair = row != NULL ? PyTuple_Pack(2, name, row) : NULL;
            Py_XDECREF(row);
            if (pair == NULL || (headers = PyList_New(2)) == NULL) {
                Py_XDECREF(pair);
                goto done;
            }
            Py_INCREF(fixed);
            PyList_SET_ITEM(headers, 0, fixed);
            PyList_SET_ITEM(headers, 1, pair);
        } else {
            Py_INCREF(headers);
        }
        PyObject *value = PyList_GET_ITEM(values, i), *key = keys != Py_None ? PyList_GET_ITEM(keys, i) : Py_None;
        Py_INCREF(value);
        Py_INCREF(key);
        PyObject *call[4] = {topic, value, key, headers};
        PyObject *r = FastPath_produce(fp, call, 3, stamped ? kwnames : NULL);
        Py_DECREF(value);
        Py_DECREF(key);
        Py_DECREF(headers);
        if (r == NULL) {
            if (PyErr_ExceptionMatches(PyExc_BufferError)) {
                PyErr_Clear();
                result = PyLong_FromSsize_t(i);
            }
            goto done;
        }
        Py_DECREF(r);
    }
    result = PyLong_FromSsize_t(i);
done:
    Py_DECREF(kwnames);
    Py_DECREF(values);
    Py_XDECREF(keys);
    Py_DECREF(prefix);
    return result;
}

/* -- FastPath: construction and the Python-visible surface ----------------------------------------------- */

static int FastPath_init(FastPath *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"inner_produce", "inner_poll", "snapshots", "tallies", "holds", "slow_produce",
                             "on_report", "queue", "picker", "default_cb", "counts", "key_mode", "only_errors",
                             "sticky_bytes", "linger_s", "inline_poll_every", "queue_max_messages", NULL};
    PyObject *inner_produce, *inner_poll, *snapshots, *tallies, *holds, *slow_produce, *on_report, *queue,
        *picker, *default_cb, *counts, *reroutes = NULL;
    int key_mode, only_errors;
    long long sticky_bytes, inline_every, queue_max;
    double linger_s;
    /* reroutes=: optional (a dict; without it keyed messages of a muted home always take the Python path), taken
     * out of a copy of the keywords: the parser's format cannot mix required and optional keyword-only names */
    PyObject *kw = kwds != NULL ? PyDict_Copy(kwds) : NULL;
    if (kwds != NULL && kw == NULL)
        return -1;
    if (kw != NULL) {
        reroutes = PyDict_GetItemString(kw, "reroutes"); /* borrowed, kept alive by the caller's kwds */
        if (reroutes != NULL) {
            if (!PyDict_Check(reroutes)) {
                Py_DECREF(kw);
                PyErr_SetString(PyExc_TypeError, "FastPath: reroutes must be a dict");
                return -1;
            }
            if (PyDict_DelItemString(kw, "reroutes") < 0) {
                Py_DECREF(kw);
                return -1;
            }
        }
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "$OOO!O!O!OOOOOO!iiLdLL", kwlist, &inner_produce, &inner_poll,
                                     &PyDict_Type, &snapshots, &PyDict_Type, &tallies, &PyDict_Type, &holds,
                                     &slow_produce, &on_report, &queue, &picker, &default_cb, &Counts_Type,
                                     &counts, &key_mode, &only_errors, &sticky_bytes, &linger_s, &inline_every,
                                     &queue_max)) {
        Py_XDECREF(kw);
        return -1;
    }
    Py_XDECREF(kw);
    PyObject *marker = PyObject_GetAttrString(queue, "report_marker");
    if (marker == NULL)
        return -1;
    PyObject *untracked = PyObject_GetAttrString(queue, "untracked_marker");
    if (untracked == NULL) {
        Py_DECREF(marker);
        return -1;
    }
    PyObject *items = PyObject_GetAttrString(queue, "items");
    if (items == NULL) {
        Py_DECREF(marker);
        Py_DECREF(untracked);
        return -1;
    }
#define SET(field, value)                                                                                       \
    do {                                                                                                        \
        PyObject *tmp = (PyObject *)self->field;                                                                \
        Py_INCREF(value);                                                                                       \
        self->field = (void *)(value);                                                                          \
        Py_XDECREF(tmp);                                                                                        \
    } while (0)
    SET(inner_produce, inner_produce);
    SET(inner_poll, inner_poll);
    SET(snapshots, snapshots);
    SET(tallies, tallies);
    SET(holds, holds);
    SET(slow_produce, slow_produce);
    SET(on_report, on_report);
    SET(picker, picker);
    SET(queue, queue);
    SET(default_cb, default_cb);
    SET(counts, counts);
#undef SET
    Py_CLEAR(self->tally_topic); /* a new tallies dict: the identity cache named the old one's entry */
    Py_CLEAR(self->snapc_topic); /* and a new snapshots dict: its versions say nothing of the old one's */
    self->snapc_snap = NULL;
    Py_CLEAR(self->tally_last);
    Py_XINCREF(reroutes);
    Py_XSETREF(self->reroutes, reroutes);
    Py_XSETREF(self->report_marker, marker);
    Py_XSETREF(self->untracked_marker, untracked);
    Py_XSETREF(self->queue_items, items);
    if (self->reporters == NULL && (self->reporters = PyDict_New()) == NULL)
        return -1;
    self->ready = 1;
    self->key_mode = key_mode;
    self->only_errors = only_errors;
    self->sticky_bytes = sticky_bytes > 0 ? sticky_bytes : 0;
    self->linger_s = linger_s;
    self->inline_poll_every = inline_every > 0 ? inline_every : 1;
    self->queue_max_messages = queue_max;
    return 0;
}

static int FastPath_traverse(FastPath *self, visitproc visit, void *arg) {
    Py_VISIT(self->inner_produce);
    Py_VISIT(self->inner_poll);
    Py_VISIT(self->snapshots);
    Py_VISIT(self->tallies);
    Py_VISIT(self->holds);
    Py_VISIT(self->slow_produce);
    Py_VISIT(self->on_report);
    Py_VISIT(self->queue);
    Py_VISIT(self->report_marker);
    Py_VISIT(self->untracked_marker);
    Py_VISIT(self->queue_items);
    Py_VISIT(self->picker);
    Py_VISIT(self->default_cb);
    Py_VISIT(self->reporters);
    Py_VISIT(self->last_cb);
    Py_VISIT(self->last_topic);
    Py_VISIT(self->last_reporter);
    Py_VISIT(self->tally_topic);
    Py_VISIT(self->slow_poll);
    Py_VISIT(self->poll_error);
    Py_VISIT(self->slow_flush);
    Py_VISIT(self->pending);
    Py_VISIT(self->resends);
    Py_VISIT(self->inner_flush);
    Py_VISIT(self->on_send);
    Py_VISIT(self->snapc_topic);
    Py_VISIT(self->tally_last);
    Py_VISIT(self->counts);
    Py_VISIT(self->snap_seen);
    Py_VISIT(self->snap_writable);
    Py_VISIT(self->snap_muted);
    Py_VISIT(self->snap_memo);
    Py_VISIT(self->reroutes);
    Py_VISIT(self->msg_type);
    Py_VISIT(self->msg_partition);
    Py_VISIT(self->msg_latency);
    Py_VISIT(self->purge_sink);
    return 0;
}

static int FastPath_clear(FastPath *self) {
    self->ready = 0;
    reporter_cache_reset(self);
    Py_CLEAR(self->slow_poll);
    Py_CLEAR(self->poll_error);
    Py_CLEAR(self->slow_flush);
    Py_CLEAR(self->pending);
    Py_CLEAR(self->resends);
    Py_CLEAR(self->inner_flush);
    Py_CLEAR(self->on_send);
    Py_CLEAR(self->snapc_topic);
    self->snapc_snap = NULL;
    Py_CLEAR(self->tally_topic);
    Py_CLEAR(self->tally_last);
    Py_CLEAR(self->inner_produce);
    Py_CLEAR(self->inner_poll);
    Py_CLEAR(self->snapshots);
    Py_CLEAR(self->tallies);
    Py_CLEAR(self->holds);
    Py_CLEAR(self->slow_produce);
    Py_CLEAR(self->on_report);
    Py_CLEAR(self->queue);
    Py_CLEAR(self->report_marker);
    Py_CLEAR(self->untracked_marker);
    Py_CLEAR(self->queue_items);
    Py_CLEAR(self->picker);
    Py_CLEAR(self->default_cb);
    Py_CLEAR(self->reporters);
    Py_CLEAR(self->counts);
    Py_CLEAR(self->snap_seen);
    Py_CLEAR(self->snap_writable);
    Py_CLEAR(self->snap_muted);
    Py_CLEAR(self->snap_memo);
    Py_CLEAR(self->reroutes);
    Py_CLEAR(self->msg_type);
    Py_CLEAR(self->msg_partition);
    Py_CLEAR(self->msg_latency);
    Py_CLEAR(self->purge_sink);
    return 0;
}

static void FastPath_dealloc(FastPath *self) {
    PyObject_GC_UnTrack(self);
    FastPath_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *FastPath_forget_reporters(FastPath *self, PyObject *Py_UNUSED(ignored)) {
    if (reporters_reset(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* This thread enters the application's poll, from poll state ``previous`` (its callbacks may run directly). */
static int direct_enter(FastPath *fp, uintptr_t previous) {
    if (poll_state_set(fp, ((((previous >> 1) + 1)) << 1) | 1) < 0)
        return -1;
    fp->since_app_poll = 0;
    fp->app_polls++;
    fp->app_pollers++;
    return 0;
}

/* ... and leaves it, back to poll state ``previous``. */
static int direct_leave(FastPath *fp, uintptr_t previous) {
    fp->app_pollers--;
    return poll_state_set(fp, previous);
}

static PyObject *FastPath_enter_direct(FastPath *self, PyObject *Py_UNUSED(ignored)) {
    if (self->rescue_pending)
        Py_RETURN_NONE; /* checked and entered in one step under the GIL: no poll starts once a rescue waits */
    uintptr_t previous = poll_state_get(self);
    PyObject *token = PyLong_FromSize_t((size_t)previous);
    if (token == NULL)
        return NULL;
    if (direct_enter(self, previous) < 0) {
        Py_DECREF(token);
        return NULL;
    }
    return token;
}

static PyObject *FastPath_leave_direct(FastPath *self, PyObject *arg) {
    size_t previous = PyLong_AsSize_t(arg);
    if (previous == (size_t)-1 && PyErr_Occurred())
        return NULL;
    uintptr_t current = poll_state_get(self);
    if (!(current & 1) || (previous >> 1) + 1 != (current >> 1)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "leave_direct: this thread is not inside the enter_direct() that returned this token");
        return NULL;
    }
    if (direct_leave(self, (uintptr_t)previous) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* -- poll() and flush() ---------------------------------------------------------------------------------- */

/* Waiting costs wake-ups, and on a small machine each wake-up of a thread that slept costs tens of microseconds of
 * CPU however little it then does (caches and TLB gone: ~40 us for an empty Python loop after a 10 ms sleep on the
 * project's 2-core machine, ~100 us for the Python poll() round). So the application's waits run here, in C,
 * waking as often as the plain client's (confluent-kafka waits in 200 ms chunks, librdkafka's flush re-checks
 * every 10 ms), with the Python poll()/flush() (slow_poll, slow_flush) left for the unusual cases. */
#define DIRECT_SLICE_S 0.2 /* a wait without a deadline re-checks the producer this often (serving.py: the same) */
#define MIN_WAIT_S 0.001   /* librdkafka waits whole milliseconds: confluent-kafka truncates 0.9 ms to a poll(0) */

/* The timeout of poll()/flush() when this code can wait for it: an exact int or float, finite or negative
 * (forever); NULL (the argument left out) is -1. Anything else (a bool, None, NaN, a huge int) is Python's. */
static int wait_timeout(PyObject *timeout, double *out) {
    if (timeout == NULL) {
        *out = -1.0;
        return 1;
    }
    double t;
    if (PyFloat_CheckExact(timeout))
        t = PyFloat_AS_DOUBLE(timeout);
    else if (PyLong_CheckExact(timeout)) {
        t = PyLong_AsDouble(timeout);
        if (t == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    } else
        return 0;
    if (!(t < 0) && !isfinite(t))
        return 0; /* NaN, +inf */
    *out = t < 0 ? -1.0 : t;
    return 1;
}

/* The one timeout argument of poll(timeout)/flush(timeout) (positional or keyword), NULL when left out; 0 when
 * the call has any other shape (Python's to answer). */
static int timeout_arg(PyObject *const *args, size_t nargsf, PyObject *kwnames, PyObject **timeout) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    *timeout = NULL;
    if (nargs == 1 && kwnames == NULL)
        *timeout = args[0];
    else if (nargs == 0 && kwnames != NULL && PyTuple_GET_SIZE(kwnames) == 1 &&
             PyTuple_GET_ITEM(kwnames, 0) == S_timeout)
        *timeout = args[0];
    else if (nargs != 0 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0))
        return 0;
    return 1;
}

/* 1 when this thread may serve the application's reports here: nothing the Python poll must handle (a closed
 * producer, a failed driver, a rescue under way, a call from inside a callback of this producer on this thread,
 * callbacks queued or being run by another thread); 0 when not; -1 with an exception. */
static int direct_ok(FastPath *fp) {
    if (!fp->ready || fp->closed || fp->broken || fp->rescue_pending || poll_state_get(fp) != 0)
        return 0;
    Py_ssize_t queued = PyObject_Length(fp->queue_items);
    if (queued != 0)
        return queued < 0 ? -1 : 0;
    PyObject *serving = PyObject_GetAttr(fp->queue, S_serving); /* a thread is running queued callbacks */
    if (serving == NULL)
        return -1;
    int busy = serving != ZERO;
    Py_DECREF(serving);
    return !busy;
}

/* One round of the application's poll: librdkafka's poll (``wait_in``: the wrapped producer's poll, or its flush),
 * waiting up to ``wait`` seconds (a Python float; a poll is back as soon as an event is served, a flush once
 * librdkafka has nothing left), with the application's callbacks run straight from it, then whatever that round
 * queued (failed reports, statistics) -- DirectServing._serve without a Python frame. Returns the callbacks run
 * and reports served (events of mutepro's own do not count), or -1 with an exception set. */
static long long direct_round(FastPath *fp, PyObject *wait_in, PyObject *wait) {
    long long before = fp->direct_reports;
    if (direct_enter(fp, 0) < 0) /* no poll of this producer on this thread: checked by direct_ok */
        return -1;
    PyObject *r = PyObject_CallOneArg(wait_in, wait);
    if (direct_leave(fp, 0) < 0 && r != NULL) { /* removing the entry allocates nothing: cannot fail in practice */
        Py_DECREF(r);
        return -1;
    }
    if (r == NULL) {
        if (fp->poll_error != NULL && fp->poll_error != Py_None && PyErr_ExceptionMatches(PyExc_SystemError)) {
            /* confluent-kafka lost a KeyboardInterrupt raised inside a callback (compat.surfaces_interrupts) */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            if (tb != NULL && value != NULL)
                PyException_SetTraceback(value, tb);
            PyObject *res = value != NULL ? PyObject_CallOneArg(fp->poll_error, value) : NULL;
            if (res != NULL) { /* the converter always raises; if it did not, the original error stands */
                Py_DECREF(res);
                PyErr_Restore(type, value, tb);
                return -1;
            }
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
        return -1;
    }
    Py_DECREF(r);
    long long served = fp->direct_reports - before;
    Py_ssize_t queued = PyObject_Length(fp->queue_items);
    if (queued < 0)
        return -1;
    if (queued > 0) { /* failed reports, statistics: run now, as the Python poll does */
        PyObject *more = PyObject_CallMethodOneArg(fp->queue, S_serve, ZERO);
        if (more == NULL)
            return -1;
        long long n = PyLong_AsLongLong(more);
        Py_DECREF(more);
        if (n == -1 && PyErr_Occurred())
            return -1;
        served += n;
    }
    return served;
}

/* direct_round waiting ``wait_s`` seconds */
static long long direct_wait(FastPath *fp, PyObject *wait_in, double wait_s) {
    PyObject *wait = PyFloat_FromDouble(wait_s);
    if (wait == NULL)
        return -1;
    long long served = direct_round(fp, wait_in, wait);
    Py_DECREF(wait);
    return served;
}

/* The Python poll()/flush() (``slow``) for the rest of a wait: ``left`` seconds, or forever when negative. */
static PyObject *hand_over(PyObject *slow, double left) {
    PyObject *arg = PyFloat_FromDouble(left < 0 ? -1.0 : left);
    if (arg == NULL)
        return NULL;
    PyObject *r = PyObject_CallOneArg(slow, arg);
    Py_DECREF(arg);
    return r;
}

typedef long long (*slice_fn)(FastPath *fp, PyObject *serve, double wait_s);
static long long direct_slice(FastPath *fp, PyObject *serve, double wait_s);
static PyObject *serve_until(FastPath *fp, double t, slice_fn slice, PyObject *serve);

/* poll(timeout=-1): MuteProducer.poll, served here while nothing unusual is going on (see direct_ok), the rest
 * by the Python poll (slow_poll). The busy writer's poll(0) -- confluent-kafka's README polls once per message --
 * is one round; a longer poll waits in librdkafka up to DIRECT_SLICE_S at a time, and between slices looks at
 * the producer again: Ctrl-C, callbacks another thread queued, a rescue, a close (those go to Python with the
 * time left). Why in C: the Python poll(0) cost ~1.5 us against the plain client's ~0.2-0.4 (with a poll per
 * message a saturated loop ran at ~0.5x its rate), and the Python poll(0.01) ~190 us of CPU against ~80. */
static PyObject *FastPath_poll(FastPath *fp, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (fp->slow_poll == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "FastPath.poll: slow_poll was not set (MuteProducer sets it)");
        return NULL;
    }
    PyObject *timeout;
    double t;
    if (!timeout_arg(args, nargsf, kwnames, &timeout) || !wait_timeout(timeout, &t))
        return PyObject_Vectorcall(fp->slow_poll, args, nargsf, kwnames);
    int ok = direct_ok(fp);
    if (ok <= 0)
        return ok < 0 ? NULL : PyObject_Vectorcall(fp->slow_poll, args, nargsf, kwnames);
    if (t == 0) {
        long long served = direct_round(fp, fp->inner_poll, ZERO);
        return served < 0 ? NULL : PyLong_FromLongLong(served);
    }
    return serve_until(fp, t, direct_slice, NULL);
}

/* One slice of the application's poll served here (serve_until's ``serve`` for FastPath_poll). */
static long long direct_slice(FastPath *fp, PyObject *serve, double wait_s) {
    return direct_wait(fp, fp->inner_poll, wait_s);
}

/* One slice served by the Python callable ``serve(wait_s) -> served`` (DirectServing._serve). */
static long long python_slice(FastPath *fp, PyObject *serve, double wait_s) {
    PyObject *wait = PyFloat_FromDouble(wait_s);
    if (wait == NULL)
        return -1;
    PyObject *r = PyObject_CallOneArg(serve, wait);
    Py_DECREF(wait);
    if (r == NULL)
        return -1;
    long long served = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return served == -1 && PyErr_Occurred() ? -1 : served;
}

/* The wait of poll(t) (t seconds, < 0: forever), the one rule for every poll: slices of at most DIRECT_SLICE_S
 * (a wait in librdkafka, back at once when a report arrives), back as soon as a slice served something; between
 * slices Ctrl-C is checked and -- FastPath_poll only (``serve`` NULL) -- whether this code may still serve (else
 * the Python poll takes the time left). librdkafka waits whole milliseconds (confluent-kafka truncates:
 * poll(0.0009) is poll(0)), so less than MIN_WAIT_S left ends the wait: the last 0.4 ms of poll(0.001) asked again
 * and again was a poll(0) spin, ~1 ms of CPU per call. */
static PyObject *serve_until(FastPath *fp, double t, slice_fn slice, PyObject *serve) {
    if (t == 0) {
        long long served = slice(fp, serve, 0.0);
        return served < 0 ? NULL : PyLong_FromLongLong(served);
    }
    double deadline = t < 0 ? 0.0 : monotonic_s() + t;
    double wait = t < 0 || t > DIRECT_SLICE_S ? DIRECT_SLICE_S : t;
    for (;;) {
        long long served = slice(fp, serve, wait);
        if (served != 0)
            return served < 0 ? NULL : PyLong_FromLongLong(served);
        double left = -1.0;
        if (t > 0) {
            left = deadline - monotonic_s();
            if (left < MIN_WAIT_S)
                return PyLong_FromLong(0);
        }
        if (PyErr_CheckSignals() < 0) /* Ctrl-C during a slice (confluent-kafka checks only between 200 ms chunks) */
            return NULL;
        if (serve == NULL) {
            int ok = direct_ok(fp);
            if (ok <= 0)
                return ok < 0 ? NULL : hand_over(fp->slow_poll, left);
        }
        wait = t < 0 || left > DIRECT_SLICE_S ? DIRECT_SLICE_S : left;
    }
}

/* serve_for(timeout, serve): DirectServing.poll -- the wait of serve_until with the Python ``serve(wait_s)`` for
 * each slice (the poll() this code leaves: queued callbacks, a rescue, a nested call). ``timeout`` None or < 0:
 * forever. */
static PyObject *FastPath_serve_for(FastPath *fp, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "serve_for(timeout, serve)");
        return NULL;
    }
    double t = -1.0;
    if (args[0] != Py_None) {
        t = PyFloat_AsDouble(args[0]);
        if (t == -1.0 && PyErr_Occurred())
            return NULL;
        if (t < 0)
            t = -1.0;
    }
    if (isnan(t)) {
        PyErr_SetString(PyExc_ValueError, "serve_for: timeout is NaN");
        return NULL;
    }
    return serve_until(fp, t, python_slice, args[1]);
}

/* What flush() waits for: len(producer) -- messages outstanding in librdkafka, callbacks queued, messages held,
 * awaiting a re-send or in a rescue's hands -- answered here when the last three are none of it (nothing held or
 * awaiting a re-send, no rescue under way: a rescue's messages in hand are counted only while rescue_pending is
 * set, and the GIL is held from here to the answer, so no rescue starts in between), by ``pending`` otherwise.
 * -1 with an exception. Why: the Python len() cost ~3 us, three times the plain client's whole flush(0). */
static Py_ssize_t pending_count(FastPath *fp) {
    Py_ssize_t queued = PyObject_Length(fp->queue_items);
    if (queued < 0)
        return -1;
    Py_ssize_t resends = fp->resends != NULL ? PyObject_Length(fp->resends) : 1;
    if (resends < 0)
        return -1;
    if (resends == 0 && PyDict_GET_SIZE(fp->holds) == 0 && !fp->rescue_pending) {
        return plain_pending(fp, queued);
    }
    PyObject *n = PyObject_CallNoArgs(fp->pending);
    if (n == NULL)
        return -1;
    Py_ssize_t count = PyLong_AsSsize_t(n);
    Py_DECREF(n);
    return count;
}

/* flush(timeout=-1): MuteProducer.flush, served here while nothing unusual is going on (see direct_ok), the rest
 * by the Python flush (slow_flush). It waits in the wrapped producer's own flush (librdkafka's rd_kafka_flush:
 * linger.ms cut short, reports served here, back once librdkafka has nothing left), DIRECT_SLICE_S at a time
 * as confluent-kafka does, until nothing is left: while messages are outstanding in librdkafka or callbacks are
 * queued -- what this code sees -- something is; when those reach 0, pending_count says whether anything else is
 * (held messages, a rescue's, re-sends): then the Python flush takes over. Why: waiting in librdkafka's poll
 * instead, flush() sat out every message's linger.ms (5 ms per call where the plain client took 1 ms). */
static PyObject *FastPath_flush(FastPath *fp, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (fp->slow_flush == NULL || fp->pending == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "FastPath.flush: slow_flush/pending were not set (MuteProducer sets them)");
        return NULL;
    }
    PyObject *timeout;
    double t;
    if (!timeout_arg(args, nargsf, kwnames, &timeout) || !wait_timeout(timeout, &t))
        return PyObject_Vectorcall(fp->slow_flush, args, nargsf, kwnames);
    int ok = direct_ok(fp);
    if (ok <= 0)
        return ok < 0 ? NULL : PyObject_Vectorcall(fp->slow_flush, args, nargsf, kwnames);
    PyObject *wait_in = fp->inner_flush != NULL && fp->inner_flush != Py_None ? fp->inner_flush : fp->inner_poll;
    double deadline = t < 0 ? 0.0 : monotonic_s() + t;
    double wait = 0.0; /* the first round only serves what is there */
    for (;;) {
        if (direct_wait(fp, wait_in, wait) < 0)
            return NULL;
        Py_ssize_t queued = PyObject_Length(fp->queue_items);
        if (queued < 0)
            return NULL;
        double left = -1.0;
        if (t >= 0)
            left = deadline - monotonic_s();
        if (fp->counts->sent_total - fp->counts->reported_total <= 0 && queued == 0) {
            Py_ssize_t rest = pending_count(fp);
            if (rest <= 0)
                return rest < 0 ? NULL : PyLong_FromLong(0);
            if (t >= 0 && left <= 0)
                return PyLong_FromSsize_t(rest);
            return hand_over(fp->slow_flush, left); /* held messages, a rescue's: Python's */
        }
        if (t >= 0 && left <= 0) {
            Py_ssize_t rest = pending_count(fp);
            return rest < 0 ? NULL : PyLong_FromSsize_t(rest);
        }
        if (PyErr_CheckSignals() < 0)
            return NULL;
        ok = direct_ok(fp);
        if (ok <= 0)
            return ok < 0 ? NULL : hand_over(fp->slow_flush, left);
        /* never less than librdkafka's millisecond: less would be a poll(0) spin until the deadline */
        wait = t < 0 || left > DIRECT_SLICE_S ? DIRECT_SLICE_S : (left > MIN_WAIT_S ? left : MIN_WAIT_S);
    }
}

static PyObject *FastPath_polling(FastPath *self, PyObject *Py_UNUSED(ignored)) {
    return PyLong_FromSize_t((size_t)(poll_state_get(self) >> 1));
}

/* check_queue(): raises BufferError when a message produced now would overfill the queue (queue_full), as the C
 * produce() does before its own messages: the Python path's produce() asks here before it sends (it counts the
 * error itself). */
static PyObject *FastPath_check_queue(FastPath *self, PyObject *Py_UNUSED(ignored)) {
    if (raise_if_queue_full(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* served_event(): a librdkafka event without an application callback (an error or throttle event when the
 * application set no error_cb / throttle_cb) was just served; inside the application's own poll()/flush() on this
 * thread it counts as served, as the plain client counts it: its poll(1.0) returns 1 after a connection error
 * event, whether or not an error_cb is set, so a loop waiting in poll() wakes as often with either client. */
static PyObject *FastPath_served_event(FastPath *self, PyObject *Py_UNUSED(ignored)) {
    if ((poll_state_get(self) & 1) != 0)
        self->direct_reports++;
    Py_RETURN_NONE;
}

/* send(topic, value, key, partition, cb, timestamp, headers, kind): MuteProducer's Core.send, every one of them --
 * the Python path's sends (explicit partitions, reroutes, probes, rescues, releases, messages of topics whose
 * metadata is not known yet) with a C reporter and confluent-kafka's positional call. A partition the topic's
 * tally tracks (0 <= partition < its count) is counted (count_sent); any other (UNASSIGNED -1: librdkafka
 * partitions it; an explicit one beyond the tally; a topic without one) goes uncounted, kind UNCOUNTED, its
 * reports all handed on to Python (Reporter_vectorcall), its headers kept for a re-send like any other's.
 * Raises what the wrapped produce() raises (BufferError, KafkaException), with nothing counted. Why: a rescue
 * re-sends every message it took back while producing threads wait; with the purge collected in C too
 * (purge_report) benchmarks/rescue_cost.py went from 11.6 to 8.2 us a message. */
static PyObject *FastPath_send(FastPath *fp, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "send(topic, value, key, partition, cb, timestamp, headers, kind)");
        return NULL;
    }
    if (!fp->ready) {
        PyErr_SetString(PyExc_RuntimeError, "FastPath.__init__ was not called (MuteProducer builds it)");
        return NULL;
    }
    PyObject *topic = args[0], *value = args[1], *key = args[2], *cb = args[4], *timestamp = args[5],
             *headers = args[6];
    long p = PyLong_AsLong(args[3]);
    long kind = PyLong_AsLong(args[7]);
    if ((p == -1 || kind == -1) && PyErr_Occurred())
        return NULL;
    PyObject *tally_obj = PyDict_GetItemWithError(fp->tallies, topic);
    if (tally_obj == NULL && PyErr_Occurred())
        return NULL;
    Tally *t = NULL;
    if (tally_obj != NULL && PyObject_TypeCheck(tally_obj, &Tally_Type) && p >= 0 && p < ((Tally *)tally_obj)->count)
        t = (Tally *)Py_NewRef(tally_obj);
    else
        kind |= KIND_UNCOUNTED; /* no partition to count: every report of it goes on to Python (on_report) */
    PyObject *reporter = NULL, *pobj = NULL, *result = NULL;
    int ran_python = 0; /* send() re-checks nothing after the reporter: Python running there is harmless */
    if (headers != Py_None || kind != 0)
        reporter = (PyObject *)reporter_new(fp, cb, t, headers != Py_None ? headers : NULL, kind, 0);
    else if ((reporter = fastpath_reporter(fp, cb, topic, t, 0, &ran_python)) == NULL) {
        PyErr_Clear(); /* an unhashable callback: a reporter of its own */
        reporter = (PyObject *)reporter_new(fp, cb, t, NULL, 0, 1);
    }
    if (reporter == NULL || (pobj = PyLong_FromLong(p)) == NULL)
        goto done;
    long ts = PyLong_CheckExact(timestamp) ? PyLong_AsLong(timestamp) : -1;
    if (ts == -1)
        PyErr_Clear(); /* not 0 (too large for a C long, or not an int): the long call passes it on as given */
    int plain_ts = ts == 0;
    PyObject *call[8] = {topic, value, key, pobj, reporter, Py_None, timestamp, headers};
    PyObject *r = PyObject_Vectorcall(fp->inner_produce, call, (plain_ts && headers == Py_None) ? 5 : 8, NULL);
    if (r == NULL)
        goto done;
    Py_DECREF(r);
    if (t == NULL) {
        fp->counts->sent_total++;
        result = Py_NewRef(Py_None);
        goto done;
    }
    /* the tally may have grown meanwhile (never shrinks): p is still inside it */
    Py_ssize_t size = value == Py_None ? 0 : PyObject_Length(value); /* len(value), as Core.send counts it */
    if (size < 0) {
        PyErr_Clear(); /* the message is in librdkafka: a byte count is not worth an error */
        size = 0;
    }
    count_sent(fp, t, p, size);
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(pobj);
    Py_XDECREF(reporter);
    Py_XDECREF(t);
    return result;
}

/* count_reroute(topic, home, target): one keyed message sent to its muted home's fallback by the Python path,
 * counted as FastPath_produce counts its own (counts.rerouted, reroutes[(topic, home)][target]). */
static PyObject *FastPath_count_reroute(FastPath *fp, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "count_reroute(topic, home, target)");
        return NULL;
    }
    if (!fp->ready || fp->reroutes == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "count_reroute: this FastPath was built without reroutes=");
        return NULL;
    }
    long home = PyLong_AsLong(args[1]);
    long target = PyLong_AsLong(args[2]);
    if ((home == -1 || target == -1) && PyErr_Occurred())
        return NULL;
    fp->counts->rerouted++;
    if (count_move(fp->reroutes, args[0], home, target) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *FastPath_get_purge_sink(FastPath *fp, void *closure) {
    return Py_NewRef(fp->purge_sink != NULL ? fp->purge_sink : Py_None);
}

static int FastPath_set_purge_sink(FastPath *fp, PyObject *value, void *closure) {
    if (value != NULL && value != Py_None && !PyList_CheckExact(value)) {
        PyErr_SetString(PyExc_TypeError, "purge_sink: a list or None");
        return -1;
    }
    PyObject *old = fp->purge_sink;
    fp->purge_sink = value != NULL && value != Py_None ? Py_NewRef(value) : NULL;
    Py_XDECREF(old);
    return 0;
}

static PyObject *FastPath_get_on_send(FastPath *fp, void *closure) {
    return Py_NewRef(fp->on_send != NULL ? fp->on_send : Py_None);
}

static int FastPath_set_on_send(FastPath *fp, PyObject *value, void *closure) {
    if (value != NULL && value != Py_None && !PyCallable_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "on_send: a callable or None");
        return -1;
    }
    PyObject *old = fp->on_send;
    fp->on_send = value != NULL && value != Py_None ? Py_NewRef(value) : NULL;
    Py_XDECREF(old);
    return 0;
}

static PyGetSetDef FastPath_getset[] = {
    {"on_send", (getter)FastPath_get_on_send, (setter)FastPath_set_on_send,
     "a callable called (then dropped) by the next produce() that hands a message to librdkafka, or None", NULL},
    {"purge_sink", (getter)FastPath_get_purge_sink, (setter)FastPath_set_purge_sink,
     "a list while a rescue collects its purge reports (each purged fast-path message appended as "
     "(enqueued, cb, kind, msg)), else None", NULL},
    {NULL},
};

static PyMethodDef FastPath_methods[] = {
    {"send", (PyCFunction)(void (*)(void))FastPath_send, METH_FASTCALL,
     "send(topic, value, key, partition, cb, timestamp, headers, kind): Core.send with a C reporter"},
    {"count_reroute", (PyCFunction)(void (*)(void))FastPath_count_reroute, METH_FASTCALL,
     "count_reroute(topic, home, target): a keyed message the Python path sent to its muted home's fallback"},
    {"produce", (PyCFunction)(void (*)(void))FastPath_produce, METH_FASTCALL | METH_KEYWORDS,
     "produce(topic, value=None, key=None, partition=-1, on_delivery=None, timestamp=0, headers=None, *, "
     "callback=None): MuteProducer.produce without a Python frame for healthy topics"},
    {"produce_rows", (PyCFunction)(void (*)(void))FastPath_produce_rows, METH_FASTCALL,
     "produce_rows(topic, values, keys, fixed, name, prefix, first, begin) -> index: the Spark sink's loop; "
     "stops at the first row the queue has no room for"},
    {"forget_reporters", (PyCFunction)FastPath_forget_reporters, METH_NOARGS, "drop the cached reporters"},
    {"enter_direct", (PyCFunction)FastPath_enter_direct, METH_NOARGS,
     "this thread now serves reports for the application: callbacks may run directly; returns a token for "
     "leave_direct, or None (nothing entered) while a rescue is pending"},
    {"leave_direct", (PyCFunction)FastPath_leave_direct, METH_O,
     "this thread leaves the application's poll: pass the token enter_direct returned"},
    {"poll", (PyCFunction)(void (*)(void))FastPath_poll, METH_FASTCALL | METH_KEYWORDS,
     "poll(timeout=-1): MuteProducer.poll; poll(0) served here when nothing unusual is going on, the rest by "
     "slow_poll"},
    {"flush", (PyCFunction)(void (*)(void))FastPath_flush, METH_FASTCALL | METH_KEYWORDS,
     "flush(timeout=-1): MuteProducer.flush; waits here when nothing unusual is going on, the rest by slow_flush"},
    {"serve_for", (PyCFunction)(void (*)(void))FastPath_serve_for, METH_FASTCALL,
     "serve_for(timeout, serve) -> served: poll()'s wait (slices, deadline) with serve(wait_s) for each slice"},
    {"check_queue", (PyCFunction)FastPath_check_queue, METH_NOARGS,
     "check_queue(): raises BufferError when reports queued for the application's poll fill the queue"},
    {"served_event", (PyCFunction)FastPath_served_event, METH_NOARGS,
     "served_event(): an event with no application callback was served; counts in the application's own poll"},
    {"polling", (PyCFunction)FastPath_polling, METH_NOARGS,
     "how many polls of the wrapped producer this thread is inside (0: none; > 0: e.g. in a delivery callback)"},
    {NULL},
};

static PyMemberDef FastPath_members[] = {
    {"gate", T_INT, offsetof(FastPath, gate), 0, "> 0 while Python holds the producer lock"},
    {"closed", T_INT, offsetof(FastPath, closed), 0, "the producer is closed: produce() takes the Python path"},
    {"app_pollers", T_LONGLONG, offsetof(FastPath, app_pollers), READONLY,
     "threads inside the application's poll()/flush() right now"},
    {"since_app_poll", T_LONGLONG, offsetof(FastPath, since_app_poll), 0, "messages since the app polled"},
    {"inline_polls", T_LONGLONG, offsetof(FastPath, inline_polls), READONLY, "inline report servings"},
    {"inline_pollers", T_LONGLONG, offsetof(FastPath, inline_pollers), READONLY,
     "threads inside produce()'s inline poll right now"},
    {"rescue_pending", T_INT, offsetof(FastPath, rescue_pending), 0,
     "> 0 while a rescue runs: no new poll starts on another thread"},
    {"direct_reports", T_LONGLONG, offsetof(FastPath, direct_reports), READONLY, "reports served directly"},
    {"fallbacks", T_LONGLONG, offsetof(FastPath, fallbacks), READONLY, "produce() calls handed to Python"},
    {"app_polls", T_LONGLONG, offsetof(FastPath, app_polls), READONLY, "the application's poll rounds"},
    {"counts", T_OBJECT, offsetof(FastPath, counts), READONLY, "the producer-wide totals"},
    {"slow_poll", T_OBJECT, offsetof(FastPath, slow_poll), 0, "the Python poll(timeout) for what poll() leaves"},
    {"poll_error", T_OBJECT, offsetof(FastPath, poll_error), 0,
     "converter(SystemError) for confluent-kafka's lost KeyboardInterrupt (always raises), or None"},
    {"broken", T_INT, offsetof(FastPath, broken), 0, "the driver failed: poll() takes the Python path (it raises)"},
    {"slow_flush", T_OBJECT, offsetof(FastPath, slow_flush), 0, "the Python flush(timeout) for what flush() leaves"},
    {"pending", T_OBJECT, offsetof(FastPath, pending), 0, "len(producer): what flush() waits for, held ones too"},
    {"resends", T_OBJECT, offsetof(FastPath, resends), 0, "the hold queues' re-send deque (flush() looks at it)"},
    {"inner_flush", T_OBJECT, offsetof(FastPath, inner_flush), 0,
     "the wrapped producer's flush: what flush() waits in (None: its poll)"},
    {NULL},
};

static PyTypeObject FastPath_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mutepro.producer._fastpath.FastPath",
    .tp_basicsize = sizeof(FastPath),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "MuteProducer's produce() and delivery-report bookkeeping for healthy topics, in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FastPath_init,
    .tp_dealloc = (destructor)FastPath_dealloc,
    .tp_traverse = (traverseproc)FastPath_traverse,
    .tp_clear = (inquiry)FastPath_clear,
    .tp_methods = FastPath_methods,
    .tp_members = FastPath_members,
    .tp_getset = FastPath_getset,
};

/* ---------------------------------------------------------------------------------------------------------- */

/* retrack(msg): a delivery report's message that waited untracked in the callback queue (see Reporter_vectorcall)
 * is seen by the cyclic collector again, right before the application's callback gets it. Only for objects the
 * queue marked so; one already tracked is left as it is. */
static PyObject *py_retrack(PyObject *module, PyObject *obj) {
    (void)module;
    if (PyObject_IS_GC(obj) && !PyObject_GC_IsTracked(obj))
        PyObject_GC_Track(obj);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"retrack", (PyCFunction)py_retrack, METH_O,
     "retrack(msg): the collector sees a report's message again (it waited untracked in the callback queue)"},
    {"key_partition", (PyCFunction)(void (*)(void))py_key_partition, METH_FASTCALL,
     "key_partition(mode, key, partition_count) -> partition, -1 (random) or -2 (not handled in C)"},
    {"crc32", (PyCFunction)py_crc32, METH_O, "crc32(data) -> librdkafka's rd_crc32 (zlib CRC-32), unsigned"},
    {"murmur2", (PyCFunction)py_murmur2, METH_O,
     "murmur2(data) -> Java's Utils.murmur2 / librdkafka's rd_murmur2 (seed 0x9747b28c), unsigned 32-bit"},
    {"fnv1a", (PyCFunction)py_fnv1a, METH_O, "fnv1a(data) -> librdkafka's rd_fnv1a (abs of the int32), unsigned"},
    {"row_id", (PyCFunction)(void (*)(void))py_row_id, METH_FASTCALL,
     "row_id(prefix, n) -> prefix + n as 8 bytes big-endian: the Spark sink's binary row identity"},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "mutepro.producer._fastpath",
    "MuteProducer's hot path in C (see _fastpath.c for why).", -1, module_methods,
};

#define INTERN(var, text)                                                                                       \
    do {                                                                                                        \
        if ((var = PyUnicode_InternFromString(text)) == NULL)                                                   \
            return NULL;                                                                                        \
    } while (0)

PyMODINIT_FUNC PyInit__fastpath(void) {
    crc32_init();
    if (!PyThread_tss_is_created(&poll_key) && PyThread_tss_create(&poll_key) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "mutepro: could not create the poll-state thread key");
        return NULL;
    }
    INTERN(S_partition, "partition");
    INTERN(S_latency, "latency");
    INTERN(S_muted, "muted");
    INTERN(S_probing, "probing");
    INTERN(S_code, "code");
    INTERN(S_writable_set, "writable_set");
    INTERN(S_partition_count, "partition_count");
    INTERN(S_on_delivery, "on_delivery");
    INTERN(S_timestamp, "timestamp");
    INTERN(S_headers, "headers");
    INTERN(S_callback, "callback");
    INTERN(S_value, "value");
    INTERN(S_key, "key");
    INTERN(S_waiters, "waiters");
    INTERN(S_wake, "wake");
    INTERN(S_extend, "extend");
    INTERN(S_set_headers, "set_headers");
    INTERN(S_reroute_memo, "reroute_memo");
    INTERN(S_timeout, "timeout");
    INTERN(S_serving, "serving");
    INTERN(S_serve, "serve");
    if ((MINUS_ONE = PyLong_FromLong(-1)) == NULL)
        return NULL;
    if ((ZERO = PyLong_FromLong(0)) == NULL)
        return NULL;
    PyTypeObject *types[] = {&Tally_Type, &Column_Type, &Counts_Type, &Reporter_Type, &FastPath_Type};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    const char *names[] = {"Tally", "Column", "Counts", "Reporter", "FastPath"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    static const struct {
        const char *name;
        int value;
    } modes[] = {{"KP_NONE", KP_NONE},           {"KP_CONSISTENT", KP_CONSISTENT},
                 {"KP_CONSISTENT_RANDOM", KP_CONSISTENT_RANDOM}, {"KP_MURMUR2", KP_MURMUR2},
                 {"KP_MURMUR2_RANDOM", KP_MURMUR2_RANDOM},       {"KP_FNV1A", KP_FNV1A},
                 {"KP_FNV1A_RANDOM", KP_FNV1A_RANDOM}};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (PyModule_AddIntConstant(m, modes[i].name, modes[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
