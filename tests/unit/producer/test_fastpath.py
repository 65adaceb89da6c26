"""The C fast path (mutepro.producer._fastpath): hashes, tally storage, and produce()/report bookkeeping
against a stand-in for confluent_kafka.Producer (no broker)."""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from collections import deque
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest

from mutepro.partition.hashing import key_partitioner
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import StickyChooser
from mutepro.producer import accel
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.message import EXPLICIT
from mutepro.producer.tracker import OutstandingTracker

fp = accel.fastpath
assert fp is not None

MODES = {
    "consistent": fp.KP_CONSISTENT,
    "consistent_random": fp.KP_CONSISTENT_RANDOM,
    "murmur2": fp.KP_MURMUR2,
    "murmur2_random": fp.KP_MURMUR2_RANDOM,
    "fnv1a": fp.KP_FNV1A,
    "fnv1a_random": fp.KP_FNV1A_RANDOM,
}


def _keys() -> list[Any]:
    rng = random.Random(7)
    keys: list[Any] = [None, b"", "", b"a", b"21", b"23456", "héllo", "κλειδί", b"\x00\xff" * 9]
    keys += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) for _ in range(400)]
    keys += [f"user-{i}" for i in range(200)]
    return keys


class TestKeyPartition:
    @pytest.mark.parametrize("name", sorted(MODES))
    def test_matches_the_python_reference_for_every_partitioner(self, name: str) -> None:
        """Every key (bytes, str, NULL, empty) lands where the reference model (tests/reference/hashing.py) puts it."""
        from tests.reference.hashing import key_partition  # here: a subprocess below imports this module alone

        for count in (1, 3, 12, 17, 100):
            for key in _keys():
                expected = key_partition(name, key, count)
                got = fp.key_partition(MODES[name], key, count)
                assert got == (-1 if expected is None else expected), (name, key, count)

    def test_unhandled_key_types_and_modes_defer_to_python(self) -> None:
        """A key type the C path does not read, or no C mode, answers -2 (the Python path decides)."""
        assert fp.key_partition(fp.KP_MURMUR2, 12345, 6) == -2
        assert fp.key_partition(fp.KP_MURMUR2, bytearray(b"k"), 6) == -2
        assert fp.key_partition(fp.KP_NONE, b"k", 6) == -2
        assert fp.key_partition(fp.KP_MURMUR2, b"k", 0) == -2


class TestTally:
    def test_columns_are_live_views(self) -> None:
        """Columns read and write the C storage in place, with list-like indexing."""
        t = fp.Tally(3, 0.5)
        t.sent[1] += 5
        t.sent[-1] = 2
        assert list(t.sent) == [0, 5, 2] and len(t.sent) == 3 and list(t.warm) == [-1, -1, -1]
        with pytest.raises(IndexError):
            t.sent[3] = 1
        with pytest.raises(TypeError):
            del t.sent[0]

    def test_grow_keeps_counts_and_never_shrinks(self) -> None:
        """grow() adds zeroed partitions (warm = -1) and ignores smaller counts."""
        t = fp.Tally(2, 1.0)
        t.reported[1] = 4
        t.grow(40)
        t.grow(1)
        assert t.count == 40 and t.reported[1] == 4 and t.reported[39] == 0 and t.warm[39] == -1

    def test_defer_probes_names_a_snapshot_and_a_deadline(self) -> None:
        """defer_probes(snap, s) keeps the snapshot and time.monotonic() + s; a negative or NaN wait is refused."""
        t = fp.Tally(1, 0.5)
        assert t.probe_snap is None and t.probe_until == 0.0
        snap = object()
        t.defer_probes(snap, 2.0)
        assert t.probe_snap is snap and 1.0 < t.probe_until - time.monotonic() <= 2.0
        for bad in (-1.0, float("nan")):
            with pytest.raises(ValueError, match="seconds"):
                t.defer_probes(snap, bad)

    def test_slow_threshold_is_writable(self) -> None:
        """slow_s is a plain float attribute."""
        t = fp.Tally(1, 0.5)
        t.slow_s = 2.0
        assert t.slow_s == 2.0


@pytest.fixture
def tracker() -> OutstandingTracker:
    return OutstandingTracker(1000, 1 << 20)


class TestTracker:
    def test_tallies_count_grow_and_checkpoint(self, tracker: OutstandingTracker) -> None:
        """The C-backed tally gives exact counts, growth and checkpoints."""
        tally = tracker.ensure("t", 2, slow_s=1.0)
        tally.sent[1] += 5
        tracker.sent_total += 5
        tally.reported[1] += 2
        tracker.reported_total += 2
        tracker.ensure("t", 4, slow_s=1.0)
        assert list(tally.sent) == [0, 5, 0, 0] and len(tally.checkpoints) == 4
        assert tracker.counts("t") == {0: 0, 1: 3, 2: 0, 3: 0} and tracker.total == 3

    def test_tallies_defer_probes(self, tracker: OutstandingTracker) -> None:
        """defer_probes keeps the snapshot and a time.monotonic() deadline; a negative wait is refused."""
        tally = tracker.ensure("t", 2, slow_s=1.0)
        snap = object()
        tally.defer_probes(snap, 5.0)
        assert tally.probe_snap is snap and 4.0 < tally.probe_until - time.monotonic() <= 5.0
        with pytest.raises(ValueError, match="seconds"):
            tally.defer_probes(snap, -0.5)


# ---------------------------------------------------------------------------------------------------------
# FastPath against a stand-in for confluent_kafka.Producer
# ---------------------------------------------------------------------------------------------------------


class FakeInner:
    """Records produce() calls; reports are delivered by poll() from ``pending``."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.pending: deque[tuple[Any, Any, Any]] = deque()
        self.full = False

    def produce(self, *args: Any) -> None:
        if self.full:
            raise BufferError("Local: Queue full")
        self.calls.append(args)

    def poll(self, timeout: float = 0) -> int:
        n = 0
        while self.pending:
            cb, err, msg = self.pending.popleft()
            cb(err, msg)
            n += 1
        return n


class FakeMsg:
    def __init__(self, topic: str, partition: int, latency: float | None = 0.01) -> None:
        self._t, self._p, self._l = topic, partition, latency

    def topic(self) -> str:
        return self._t

    def partition(self) -> int:
        return self._p

    def latency(self) -> float | None:
        return self._l


class Rig:
    """A FastPath wired like MuteProducer wires it, with recording fallbacks."""

    def __init__(
        self,
        *,
        muted: frozenset[int] = frozenset(),
        key_mode: int = fp.KP_CONSISTENT_RANDOM,
        sticky_bytes: int = 1000,
        inline_poll_every: int = 10_000,
        reroutes: dict[tuple[str, int], dict[int, int]] | None = None,
        linger_s: float = 60.0,
        queue_max_messages: int = 1000,
    ) -> None:
        self.inner = FakeInner()
        self.tracker = OutstandingTracker(1000, 1 << 20)
        self.tally = self.tracker.ensure("t", 6, slow_s=0.5)
        for p in range(6):  # warm partitions: reports are judged by the C reporter
            self.tally.warm[p] = 0
        self.snapshots = {"t": TopicSnapshot.build("t", 6, muted, None)}
        self.holds: dict[Any, Any] = {}
        self.slow_calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.reports: list[tuple[Any, ...]] = []
        self.queue = CallbackQueue()
        self.picks = 0
        self.fast = fp.FastPath(
            inner_produce=self.inner.produce, inner_poll=self.inner.poll, snapshots=self.snapshots,
            tallies=self.tracker.topics, holds=self.holds, slow_produce=self._slow, on_report=self._on_report,
            queue=self.queue, picker=self._pick, default_cb=None, counts=self.tracker.totals, key_mode=key_mode,
            only_errors=0, sticky_bytes=sticky_bytes, linger_s=linger_s, inline_poll_every=inline_poll_every,
            queue_max_messages=queue_max_messages, **({"reroutes": reroutes} if reroutes is not None else {}),
        )

    def _slow(self, *args: Any, **kwargs: Any) -> str:
        self.slow_calls.append((args, kwargs))
        return "slow"

    def _on_report(self, cb: Any, kind: int, err: Any, msg: Any) -> None:
        self.reports.append((cb, kind, err, msg))

    def _pick(self, snap: TopicSnapshot) -> int | None:
        self.picks += 1
        return snap.writable[-1] if snap.writable else None


class TestFastPathProduce:
    def test_healthy_unkeyed_goes_sticky_without_python(self) -> None:
        """Unkeyed messages stick to one picked partition and are counted; nothing falls back."""
        rig = Rig()
        for _ in range(5):
            assert rig.fast.produce("t", b"x" * 100) is None
        assert rig.slow_calls == [] and rig.picks == 1
        assert {c[3] for c in rig.inner.calls} == {5}
        assert rig.tally.sent[5] == 5 and rig.tally.sent_bytes[5] == 500
        assert rig.tracker.totals.produced == 5 and rig.tracker.sent_total == 5
        assert rig.tally.stick == 5

    def test_sticky_switches_after_sticky_bytes(self) -> None:
        """A new pick happens once the sticky partition took sticky_bytes."""
        rig = Rig()
        for _ in range(12):
            rig.fast.produce("t", b"x" * 100)  # 1000 sticky bytes -> a switch every 10 messages
        assert rig.picks == 2

    def test_a_stick_ends_soon_after_its_linger_however_many_reads_are_skipped(self) -> None:
        """Once the sticky partition's linger is over, a new pick comes within 65 messages (the stride between two
        precise clock reads is at most 64), after thousands of messages have made the stride as long as it gets."""
        linger = 0.05
        rig = Rig(sticky_bytes=0, linger_s=linger)
        for _ in range(5000):
            rig.fast.produce("t", b"x")
        picks, done = rig.picks, time.monotonic()
        while time.monotonic() <= done + linger:  # the current stick's deadline is now behind us
            pass
        for _ in range(65):
            rig.fast.produce("t", b"x")
            if rig.picks > picks:
                break
        assert rig.picks == picks + 1, "no new pick in 65 messages after the linger ended"

    def test_keyed_messages_land_on_librdkafka_partition(self) -> None:
        """Keyed placement is the configured partitioner's, passed to librdkafka as an explicit partition."""
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        ref = key_partitioner("murmur2_random")
        for i in range(50):
            rig.fast.produce("t", b"v", f"k{i}".encode())
        assert [c[3] for c in rig.inner.calls] == [ref(f"k{i}".encode(), 6) for i in range(50)]

    def test_arguments_reach_librdkafka_positionally(self) -> None:
        """Timestamp and headers are passed on; the reporter replaces the user's callback."""
        rig = Rig()
        cb = lambda err, msg: None  # noqa: E731
        rig.fast.produce("t", b"v", b"k", on_delivery=cb, timestamp=123, headers=[("h", b"1")])
        args = rig.inner.calls[0]
        assert args[:3] == ("t", b"v", b"k") and args[5:] == (None, 123, [("h", b"1")])
        assert type(args[4]).__name__ == "Reporter"

    def test_explicit_none_headers_take_the_short_call(self) -> None:
        """headers=None (as wrappers forward it) reaches librdkafka as the five-argument call, without headers."""
        rig = Rig()
        rig.fast.produce("t", b"v", b"k", headers=None)
        assert len(rig.inner.calls[0]) == 5

    @pytest.mark.parametrize(
        "call",
        [
            lambda f: f.produce("t", b"v", partition=6),  # explicit partition beyond the topic: librdkafka's error
            lambda f: f.produce("t", b"v", partition=-2),  # a negative other than -1: librdkafka's error
            lambda f: f.produce("t", b"v", partition=True),  # not exactly an int
            lambda f: f.produce("other", b"v"),  # unknown topic
            lambda f: f.produce("t", value=bytearray(b"v")),  # value type the C path does not size
            lambda f: f.produce("t", b"v", 42),  # key type the C path does not hash
            lambda f: f.produce("t", b"v", bogus=1),  # unknown keyword: Python raises the TypeError
            lambda f: f.produce(b"t", b"v"),  # topic not a str
            lambda f: f.produce(),  # no topic
        ],
    )
    def test_everything_unusual_goes_to_python(self, call: Any) -> None:
        """The C path hands anything it does not cover to the Python produce(), untouched."""
        rig = Rig()
        assert call(rig.fast) == "slow"
        assert rig.inner.calls == [] and len(rig.slow_calls) == 1

    def test_muted_partitions_are_avoided_in_c(self) -> None:
        """With partitions muted (none half-open), unkeyed messages stick to writable ones in C, keyed ones whose
        home is healthy go straight there, and keyed ones whose home is muted go to Python's keyed policy."""
        rig = Rig(muted=frozenset({5}), key_mode=fp.KP_MURMUR2_RANDOM)
        for _ in range(3):
            assert rig.fast.produce("t", b"v") is None
        assert {c[3] for c in rig.inner.calls} == {4}  # the picker's choice among writable (0..4)
        ref = key_partitioner("murmur2_random")
        keys = [f"k{i}".encode() for i in range(40)]
        results = [rig.fast.produce("t", b"v", k) for k in keys]
        assert [r == "slow" for r in results] == [ref(k, 6) == 5 for k in keys]
        assert any(r == "slow" for r in results) and any(r is None for r in results)

    def test_a_sticky_partition_muted_later_is_left(self) -> None:
        """The sticky partition is re-checked against the snapshot: once muted, the next message picks anew."""
        rig = Rig()
        rig.fast.produce("t", b"v")
        assert rig.tally.stick == 5
        rig.snapshots["t"] = TopicSnapshot.build("t", 6, [5], None)
        rig.fast.produce("t", b"v")
        assert rig.inner.calls[-1][3] == 4 and rig.picks == 2

    def test_a_snapshot_replaced_under_the_same_topic_object_is_seen_at_once(self) -> None:
        """The snapshot lookup is cached per topic object: any write to the snapshots dict (even the same key,
        the same topic string) is seen by the very next message, and a removed topic goes to Python."""
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        topic = "t"
        ref = key_partitioner("murmur2_random")
        key = next(k for k in (f"k{i}".encode() for i in range(100)) if ref(k, 6) == 3)
        assert rig.fast.produce(topic, b"v", key) is None and rig.inner.calls[-1][3] == 3
        rig.snapshots[topic] = TopicSnapshot.build(topic, 6, [3], None)  # home muted: the keyed policy decides
        assert rig.fast.produce(topic, b"v", key) == "slow"
        rig.snapshots[topic] = TopicSnapshot.build(topic, 6, [], None)
        assert rig.fast.produce(topic, b"v", key) is None and rig.inner.calls[-1][3] == 3
        del rig.snapshots[topic]
        assert rig.fast.produce(topic, b"v", key) == "slow"

    def test_positional_minus_one_is_the_sticky_choice_and_minus_two_goes_to_python(self) -> None:
        """produce(topic, value, None, -1, cb), the positional style, stays in C on the sticky partition; -2
        goes to Python (which passes it to librdkafka for the plain client's error)."""
        rig = Rig()
        assert rig.fast.produce("t", b"v", None, -1, None) is None
        assert rig.fast.produce("t", b"v", None, int("-1"), None) is None
        assert [c[3] for c in rig.inner.calls] == [5, 5] and rig.slow_calls == []
        assert rig.fast.produce("t", b"v", None, -2, None) == "slow"

    def test_a_callback_that_is_not_callable_goes_to_python_even_after_a_callable_one(self) -> None:
        """The callable check is skipped only for the callback cached with its reporter."""
        rig = Rig()
        assert rig.fast.produce("t", b"v", on_delivery=print) is None
        assert rig.fast.produce("t", b"v", on_delivery=print) is None
        assert rig.fast.produce("t", b"v", on_delivery=42) == "slow"
        assert len(rig.inner.calls) == 2

    def test_avoided_partitions_take_keyed_messages_only(self) -> None:
        """An avoided partition (its leader stands out, not muted) gets no unkeyed message in C, but keyed
        messages hashed to it still go straight home, without Python."""
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        rig.fast.produce("t", b"v")
        assert rig.tally.stick == 5
        rig.snapshots["t"] = TopicSnapshot.build("t", 6, [], None, avoided=[5])
        rig.fast.produce("t", b"v")
        assert rig.inner.calls[-1][3] == 4 and rig.picks == 2
        ref = key_partitioner("murmur2_random")
        keys = [f"k{i}".encode() for i in range(40)]
        assert all(rig.fast.produce("t", b"v", k) is None for k in keys)
        assert [c[3] for c in rig.inner.calls[-40:]] == [ref(k, 6) for k in keys]
        assert 5 in {ref(k, 6) for k in keys} and rig.slow_calls == []

    def test_half_open_partitions_send_everything_to_python(self) -> None:
        """While a muted partition is half-open, the next messages may be its probes: Python decides."""
        rig = Rig()
        rig.snapshots["t"] = TopicSnapshot.build("t", 6, [5], None, probing=[5])
        assert rig.fast.produce("t", b"v") == "slow" and rig.fast.produce("t", b"v", b"k") == "slow"

    def test_deferred_probes_keep_a_half_open_topic_in_c(self) -> None:
        """Python said no probe is due for this snapshot (defer_probes): unkeyed messages stay in C and off the
        half-open partition; a lapsed deferral, or one for another snapshot, sends them to Python again."""
        rig = Rig()
        snap = TopicSnapshot.build("t", 6, [5], None, probing=[5])
        rig.snapshots["t"] = snap
        rig.tally.defer_probes(snap, 60.0)
        assert all(rig.fast.produce("t", b"v") is None for _ in range(20))
        assert 5 not in {c[3] for c in rig.inner.calls} and rig.slow_calls == []
        rig.tally.defer_probes(snap, 0.0)
        assert rig.fast.produce("t", b"v") == "slow"
        rig.tally.defer_probes(TopicSnapshot.build("t", 6, [5], None, probing=[5]), 60.0)
        assert rig.fast.produce("t", b"v") == "slow"

    def test_held_keys_gate_and_close_go_to_python(self) -> None:
        """Anything held, the producer lock held elsewhere, or a closed producer: Python decides."""
        rig = Rig()
        rig.holds[("t", 1)] = deque([object()])
        assert rig.fast.produce("t", b"v") == "slow"
        rig = Rig()
        rig.fast.gate = 1
        assert rig.fast.produce("t", b"v") == "slow"
        rig.fast.gate = 0
        rig.fast.closed = 1
        assert rig.fast.produce("t", b"v") == "slow"

    def test_buffer_error_is_counted_and_raised(self) -> None:
        """A full librdkafka queue raises BufferError to the caller, counted, and counts no send."""
        rig = Rig()
        rig.inner.full = True
        with pytest.raises(BufferError):
            rig.fast.produce("t", b"v")
        assert rig.tracker.totals.buffer_errors == 1 and rig.tracker.sent_total == 0

    def test_reports_queued_for_the_application_hold_their_places_in_the_queue(self) -> None:
        """A loop that polls only on BufferError: the inline poll moves every report into the callback queue, and
        those still count against queue.buffering.max.messages, as librdkafka counts a report until poll() serves
        it. With 8 places, 8 messages are accepted, then BufferError (the plain client's words), counted, nothing
        sent; the application's poll frees the places."""
        rig = Rig(sticky_bytes=0, inline_poll_every=1, queue_max_messages=8)
        delivered: list[Any] = []
        raised: list[str] = []
        pushed = 0
        for _ in range(20):
            for call in rig.inner.calls[pushed:]:
                rig.inner.pending.append((call[4], None, FakeMsg("t", call[3])))  # librdkafka delivered it
            pushed = len(rig.inner.calls)
            try:
                rig.fast.produce("t", b"v", on_delivery=lambda err, msg: delivered.append(msg))
            except BufferError as e:
                raised.append(str(e))
        assert len(rig.inner.calls) == 8 and delivered == []
        assert len(rig.queue) + rig.tracker.total == 8
        assert raised == ["Local: Queue full"] * 12 and rig.tracker.totals.buffer_errors == 12
        rig.queue.serve(0)  # the application's poll()
        assert len(delivered) == len(rig.inner.calls) - rig.tracker.total
        rig.fast.produce("t", b"v", on_delivery=lambda err, msg: None)
        assert len(rig.inner.calls) == 9

    def test_with_nothing_queued_librdkafka_alone_decides_when_the_queue_is_full(self) -> None:
        """Messages outstanding in librdkafka alone never make mutepro raise: librdkafka's own count is exact."""
        rig = Rig(sticky_bytes=0, queue_max_messages=4)
        for _ in range(10):
            rig.fast.produce("t", b"v")
        assert len(rig.inner.calls) == 10 and rig.tracker.totals.buffer_errors == 0
        rig.fast.check_queue()  # nothing queued: no error either

    def test_check_queue_is_the_python_paths_question(self) -> None:
        """check_queue() raises what produce() raises for a full queue, without counting it (the caller does)."""
        rig = Rig(sticky_bytes=0, queue_max_messages=3)
        rig.fast.produce("t", b"v")
        rig.queue.put_report(lambda err, msg: None, FakeMsg("t", 0))
        rig.queue.put_report(lambda err, msg: None, FakeMsg("t", 0))
        with pytest.raises(BufferError, match="Local: Queue full"):
            rig.fast.check_queue()
        assert rig.tracker.totals.buffer_errors == 0

    def test_inline_poll_when_the_application_does_not_poll(self) -> None:
        """After inline_poll_every messages without an app poll, reports are served (and queued)."""
        rig = Rig(sticky_bytes=0, inline_poll_every=3)
        for _ in range(7):
            rig.fast.produce("t", b"v")
        assert rig.fast.inline_polls == 2

    def test_the_slow_paths_messages_count_toward_the_same_inline_poll(self) -> None:
        """A message handed to the slow path (here: a topic without a snapshot) counts toward inline_poll_every
        like a fast-path one: one counter and rule for both (the slow path has no inline serving of its own)."""
        rig = Rig(sticky_bytes=0, inline_poll_every=3)
        rig.fast.produce("t", b"v")
        rig.fast.produce("unknown", b"v")
        rig.fast.produce("unknown", b"v")
        assert len(rig.slow_calls) == 2 and rig.fast.inline_polls == 1
        rig.fast.produce("unknown", b"v")
        assert rig.fast.inline_polls == 1 and rig.fast.since_app_poll == 1


class TestStickyRule:
    """Tally.choose_sticky: the fast path's sticky rule at an explicit ``now`` (StickyChooser's clock)."""

    @staticmethod
    def _picker(picks: list[int], answer: int | None) -> Any:
        def pick(snap: TopicSnapshot) -> int | None:
            picks.append(1)
            return answer

        return pick

    def test_the_stick_holds_until_its_deadline_then_redraws(self) -> None:
        """linger 10 s at now=100: kept at 109.9 (no draw), redrawn at 110 -- the deadline read from ``now``."""
        tally = fp.Tally(0, 0.0)
        snap = TopicSnapshot.build("t", 6, frozenset(), None)
        picks: list[int] = []
        assert tally.choose_sticky(snap, 10, 100.0, 0, 10.0, self._picker(picks, 4)) == 4
        assert tally.choose_sticky(snap, 10, 109.9, 0, 10.0, self._picker(picks, 1)) == 4
        assert len(picks) == 1 and tally.stick == 4
        assert tally.choose_sticky(snap, 10, 110.0, 0, 10.0, self._picker(picks, 1)) == 1
        assert len(picks) == 2 and tally.stick == 1

    def test_bytes_writability_and_nothing_writable(self) -> None:
        """sticky_bytes 15: the second 10-byte message still sticks (10 < 15), the third draws; a muted stick is
        left at once; past its deadline, pick() answering None (nothing writable) drops the stick."""
        tally = fp.Tally(0, 0.0)
        snap = TopicSnapshot.build("t", 6, frozenset(), None)
        picks: list[int] = []
        tally.choose_sticky(snap, 10, 0.0, 15, 60.0, self._picker(picks, 2))
        assert tally.choose_sticky(snap, 10, 0.0, 15, 60.0, self._picker(picks, 3)) == 2
        assert tally.choose_sticky(snap, 10, 0.0, 15, 60.0, self._picker(picks, 3)) == 3 and len(picks) == 2
        muted = TopicSnapshot.build("t", 6, frozenset({3}), None)
        assert tally.choose_sticky(muted, 10, 0.0, 15, 60.0, self._picker(picks, 5)) == 5
        assert tally.choose_sticky(muted, 10, 100.0, 15, 60.0, self._picker(picks, None)) is None  # past 60 s
        assert tally.stick is None

    def test_linger_zero_keeps_no_stick(self) -> None:
        """linger 0 (sticky.partitioning.linger.ms=0): every message draws."""
        tally = fp.Tally(0, 0.0)
        snap = TopicSnapshot.build("t", 6, frozenset(), None)
        picks: list[int] = []
        for _ in range(3):
            tally.choose_sticky(snap, 1, 0.0, 0, 0.0, self._picker(picks, 2))
        assert len(picks) == 3 and tally.stick is None

    def test_the_slow_paths_choice_is_the_fast_paths_stick(self) -> None:
        """StickyChooser.choose with the topic's Tally (what the slow path passes) sets the stick the C fast path
        then keeps: the next unkeyed produce() goes there without a draw of its own."""
        rig = Rig(linger_s=60.0, sticky_bytes=0)
        chooser = StickyChooser(sticky_bytes=0, linger_s=60.0, rng=random.Random(3))
        chosen = chooser.choose(rig.snapshots["t"], 1, rig.tally)
        assert chosen is not None and rig.tally.stick == chosen
        rig.fast.produce("t", b"v")
        assert rig.inner.calls[-1][3] == chosen and rig.picks == 0


class TestServeFor:
    """FastPath.serve_for: the wait of poll(timeout) -- DirectServing.poll's too -- with a Python slice."""

    @staticmethod
    def _serve(answers: list[int], waits: list[float]) -> Any:
        def serve(wait_s: float) -> int:
            waits.append(wait_s)
            return answers.pop(0) if answers else 0

        return serve

    def test_slices_until_something_is_served(self) -> None:
        """Forever (None): 0.2 s slices until a slice serves something, which is returned."""
        waits: list[float] = []
        assert Rig().fast.serve_for(None, self._serve([0, 0, 3], waits)) == 3
        assert waits == [0.2, 0.2, 0.2]

    def test_zero_is_one_round_and_a_short_deadline_ends_the_wait(self) -> None:
        """timeout 0: one round waiting 0; timeout 0.5 ms: one slice of 0.5 ms, then less than librdkafka's
        millisecond is left and the wait ends with 0."""
        waits: list[float] = []
        assert Rig().fast.serve_for(0, self._serve([], waits)) == 0 and waits == [0.0]
        waits.clear()
        assert Rig().fast.serve_for(0.0005, self._serve([], waits)) == 0 and waits == [0.0005]

    def test_a_slice_never_waits_past_the_deadline(self) -> None:
        """timeout 0.15 (under a slice): every slice waits at most what is left of the 0.15 s."""
        waits: list[float] = []
        assert Rig().fast.serve_for(0.15, self._serve([0, 0, 1], waits)) == 1
        assert waits[0] == 0.15 and len(waits) == 3 and all(0 < w <= 0.15 for w in waits)

    def test_an_exception_in_a_slice_propagates(self) -> None:
        def serve(wait_s: float) -> int:
            raise KeyError("boom")

        with pytest.raises(KeyError):
            Rig().fast.serve_for(1.0, serve)


class TestRerouteMemo:
    @staticmethod
    def _muted_home_key(rig: Rig, home: int) -> bytes:
        ref = key_partitioner("murmur2_random")
        return next(k for k in (f"k{i}".encode() for i in range(1000)) if ref(k, 6) == home)

    def test_a_remembered_key_goes_to_its_fallback_in_c(self) -> None:
        """A key in the snapshot's memo goes to its fallback without Python, counted and recorded as a move."""
        moves: dict[tuple[str, int], dict[int, int]] = {}
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({2}), reroutes=moves)
        key = self._muted_home_key(rig, 2)
        rig.snapshots["t"].reroute_memo[key] = 4
        for _ in range(3):
            rig.fast.produce("t", b"v", key)
        assert rig.slow_calls == [] and [c[3] for c in rig.inner.calls] == [4, 4, 4]
        assert rig.tracker.totals.rerouted == 3 and moves == {("t", 2): {4: 3}}
        assert rig.tally.sent[4] == 3 and rig.tally.sent[2] == 0

    def test_a_key_not_remembered_asks_python(self) -> None:
        """A muted home's key missing from the memo (or a fast path without reroutes) takes the Python path."""
        key = self._muted_home_key(Rig(), 2)
        for rig in (Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({2}), reroutes={}),
                    Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({2}))):
            rig.snapshots["t"].reroute_memo[b"unrelated"] = 4
            assert rig.fast.produce("t", b"v", key) == "slow"
            assert rig.inner.calls == [] and rig.tracker.totals.rerouted == 0

    def test_a_bad_memo_entry_is_not_trusted(self) -> None:
        """A memo entry that is not a partition of the topic (or is the home itself) sends the key to Python."""
        for bad in (99, -1, 2, "4"):
            rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({2}), reroutes={})
            key = self._muted_home_key(rig, 2)
            rig.snapshots["t"].reroute_memo[key] = bad  # type: ignore[assignment]
            assert rig.fast.produce("t", b"v", key) == "slow"


class TestProduceRows:
    FIXED = ("x-mutepro-batch", b"q:3")

    def _both(self, rig_c: Rig, rig_py: Rig, *args: Any) -> tuple[int, int]:
        from tests.reference.rows import produce_rows  # here: a subprocess below imports this module alone

        return (rig_c.fast.produce_rows(*args), produce_rows(rig_py.fast.produce, *args))

    @staticmethod
    def _calls(rig: Rig) -> list[tuple[Any, ...]]:
        return [c[:4] + c[5:] for c in rig.inner.calls]  # the reporter (c[4]) is a fresh object per message

    def test_same_messages_as_the_python_loop(self) -> None:
        """Keyed rows with identity headers reach librdkafka exactly as the Python twin's produce() calls do."""
        a, b = Rig(key_mode=fp.KP_MURMUR2_RANDOM), Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        values, keys = [b"v0", b"v1", "v2"], [b"k0", None, b"k2"]
        assert self._both(a, b, "t", values, keys, self.FIXED, "x-mutepro-row", "1:", 40, 0) == (3, 3)
        assert self._calls(a) == self._calls(b)
        assert a.inner.calls[2][7] == [self.FIXED, ("x-mutepro-row", "1:42")]
        assert a.tally.sent[a.inner.calls[0][3]] >= 1 and a.slow_calls == []

    def test_no_headers_when_fixed_is_none(self) -> None:
        """fixed None: no headers at all, and keys None: every row unkeyed."""
        rig = Rig()
        assert rig.fast.produce_rows("t", [b"a", b"b"], None, None, "x-mutepro-row", "0:", 0, 0) == 2
        assert [c[2] for c in rig.inner.calls] == [None, None] and all(len(c) == 5 for c in rig.inner.calls)

    def test_stops_at_a_full_queue_and_resumes_from_begin(self) -> None:
        """BufferError ends the call at that row's index (nothing raised); a call from there sends the rest."""
        rig = Rig()
        rows = [b"r0", b"r1", b"r2"]
        assert rig.fast.produce_rows("t", rows, None, self.FIXED, "x-mutepro-row", "0:", 0, 1) == 3
        rig.inner.calls.clear()
        rig.inner.full = True
        assert rig.fast.produce_rows("t", rows, None, self.FIXED, "x-mutepro-row", "0:", 0, 1) == 1
        rig.inner.full = False
        assert rig.fast.produce_rows("t", rows, None, self.FIXED, "x-mutepro-row", "0:", 0, 1) == 3
        assert [c[7][1][1] for c in rig.inner.calls] == ["0:1", "0:2"]

    def test_rows_python_must_decide_take_the_python_path_with_their_headers(self) -> None:
        """A keyed row whose home is muted goes to the Python produce() with the same arguments."""
        home = key_partitioner("murmur2_random")(b"k", 6)
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({home}))
        assert rig.fast.produce_rows("t", [b"v"], [b"k"], self.FIXED, "x-mutepro-row", "2:", 7, 0) == 1
        assert rig.slow_calls == [(("t", b"v", b"k"), {"headers": [self.FIXED, ("x-mutepro-row", "2:7")]})]

    def test_other_errors_propagate(self) -> None:
        """An error other than a full queue is raised, not swallowed."""
        rig = Rig()

        def broken(*args: Any) -> None:
            raise ValueError("boom")

        rig.fast = fp.FastPath(
            inner_produce=broken, inner_poll=rig.inner.poll, snapshots=rig.snapshots, tallies=rig.tracker.topics,
            holds=rig.holds, slow_produce=rig._slow, on_report=rig._on_report, queue=rig.queue, picker=rig._pick,
            default_cb=None, counts=rig.tracker.totals, key_mode=fp.KP_CONSISTENT_RANDOM, only_errors=0,
            sticky_bytes=1000, linger_s=60.0, inline_poll_every=10_000, queue_max_messages=1000,
        )
        with pytest.raises(ValueError, match="boom"):
            rig.fast.produce_rows("t", [b"v"], None, None, "x-mutepro-row", "0:", 0, 0)

    def test_wrong_types_are_type_errors(self) -> None:
        """Values that are not a list or keys of another type are TypeErrors; keys of another length a ValueError."""
        rig = Rig()
        with pytest.raises(TypeError, match="must be lists"):
            rig.fast.produce_rows("t", (b"v",), None, None, "x-mutepro-row", "0:", 0, 0)
        with pytest.raises(TypeError, match="must be lists"):
            rig.fast.produce_rows("t", [b"v"], "k", None, "x-mutepro-row", "0:", 0, 0)
        with pytest.raises(TypeError):
            rig.fast.produce_rows("t", [b"v"])
        with pytest.raises(ValueError, match="differ in length"):
            rig.fast.produce_rows("t", [b"v", b"w"], [b"k"], None, "x-mutepro-row", "0:", 0, 0)
        assert rig.inner.calls == []


class TestReporter:
    def _sent(self, rig: Rig, cb: Any, n: int = 1) -> Any:
        for _ in range(n):
            rig.fast.produce("t", b"v", on_delivery=cb)
        return rig.inner.calls[-1][4]

    def test_success_counts_and_queues_outside_the_apps_poll(self) -> None:
        """A success bumps reported/ok, and its callback waits in the queue for the application's poll."""
        rig = Rig()
        got: list[Any] = []
        reporter = self._sent(rig, lambda err, msg: got.append(msg), 2)
        p = rig.inner.calls[-1][3]
        reporter(None, FakeMsg("t", p, latency=0.9))
        assert rig.tally.reported[p] == 1 and rig.tally.ok[p] == 1 and rig.tally.slow[p] == 1
        assert rig.tracker.totals.delivered == 1 and got == [] and len(rig.queue) == 1
        rig.queue.serve(0)
        assert len(got) == 1

    def test_confluent_messages_are_judged_like_any_other(self) -> None:
        """A real confluent_kafka.Message (whose methods the reporter looks up once per type) and a Python fake
        (looked up by name every time) count alike, in any order."""
        rig = Rig()
        reporter = self._sent(rig, None, 4)
        p = rig.inner.calls[-1][3]
        for latency in (0.9, 0.01, 0.9, 0.01):
            real = confluent_kafka.Message(topic="t", partition=p, offset=1, value=b"v", latency=latency)
            reporter(None, real if latency > 0.5 else FakeMsg("t", p, latency=latency))
        assert rig.tally.reported[p] == 4 and rig.tally.ok[p] == 4 and rig.tally.slow[p] == 2

    def test_a_queued_message_waits_untracked_and_is_tracked_again_for_its_callback(self) -> None:
        """A confluent_kafka.Message waiting in the queue for the application's poll is not visited by the cyclic
        collector (100,000 waiting cost ~1.5 us a message in collections); the callback gets it tracked, as the
        plain client hands it out. A Python object (a FakeMsg) is queued as it is."""
        rig = Rig()
        seen: list[tuple[Any, bool]] = []
        reporter = self._sent(rig, lambda err, msg: seen.append((msg, gc.is_tracked(msg))), 2)
        p = rig.inner.calls[-1][3]
        real = confluent_kafka.Message(topic="t", partition=p, offset=1, value=b"v", latency=0.01)
        fake = FakeMsg("t", p, latency=0.01)
        assert gc.is_tracked(real)
        reporter(None, real)
        reporter(None, fake)
        assert not gc.is_tracked(real) and gc.is_tracked(fake) and len(rig.queue) == 2
        gc.collect()  # a collection while it waits leaves it (and what it holds) alone
        assert real.value() == b"v"
        rig.queue.serve(0)
        assert seen == [(real, True), (fake, True)]

    def test_direct_inside_the_apps_poll(self) -> None:
        """Inside the application's poll (enter_direct on this thread, queue empty) the callback runs at once."""
        rig = Rig()
        got: list[Any] = []
        reporter = self._sent(rig, lambda err, msg: got.append(msg))
        previous = rig.fast.enter_direct()
        try:
            reporter(None, FakeMsg("t", rig.inner.calls[-1][3]))
        finally:
            rig.fast.leave_direct(previous)
        assert len(got) == 1 and len(rig.queue) == 0 and rig.fast.direct_reports == 1

    def test_direct_waits_behind_older_queued_callbacks(self) -> None:
        """Callbacks keep their order: with anything queued, a report queues behind it even inside poll."""
        rig = Rig()
        got: list[Any] = []
        reporter = self._sent(rig, lambda err, msg: got.append(msg))
        rig.queue.put(got.append, "older")
        previous = rig.fast.enter_direct()
        reporter(None, FakeMsg("t", rig.inner.calls[-1][3]))
        rig.fast.leave_direct(previous)
        assert got == [] and len(rig.queue) == 2
        rig.queue.serve(0)
        assert got[0] == "older"

    def test_other_threads_never_call_directly(self) -> None:
        """Reports served on another thread (the driver) are queued even while the app is in poll."""
        rig = Rig()
        got: list[Any] = []
        reporter = self._sent(rig, lambda err, msg: got.append(msg))
        previous = rig.fast.enter_direct()
        worker = threading.Thread(target=reporter, args=(None, FakeMsg("t", rig.inner.calls[-1][3])))
        worker.start()
        worker.join()
        rig.fast.leave_direct(previous)
        assert got == [] and len(rig.queue) == 1

    def test_a_report_counts_for_the_partition_it_was_produced_to_without_asking(self) -> None:
        """Fast-path reporters are per partition (shared per callback, topic and partition; one of its own with
        headers): a delivery counts for the partition the message went to, and msg.partition() is never called."""

        class NoPartition(FakeMsg):
            def partition(self) -> int:
                raise AssertionError("the reporter asked the report for its partition")

        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        ref = key_partitioner("murmur2_random")
        keys = [b"a", b"b", b"c", b"d", b"e", b"f"]
        for key in keys:
            rig.fast.produce("t", b"v", key)
            rig.fast.produce("t", b"v", key, headers=[("h", b"1")])
        reporters = [c[4] for c in rig.inner.calls]
        for call in rig.inner.calls:
            call[4](None, NoPartition("t", (call[3] + 1) % 6))  # a report that would name another partition
        for p in range(6):
            expected = 2 * sum(ref(k, 6) == p for k in keys)
            assert rig.tally.reported[p] == expected and rig.tally.ok[p] == expected
        shared = reporters[0::2]
        for i, key in enumerate(keys):  # the same callback and partition share one reporter
            twin = next(j for j, k in enumerate(keys) if ref(k, 6) == ref(key, 6))
            assert shared[i] is shared[twin]
        assert len({id(r) for r in shared}) == len({ref(k, 6) for k in keys})

    def test_reporters_with_headers_are_not_tracked_by_the_collector(self) -> None:
        """A per-message reporter and the (str, bytes) pairs it keeps are untracked; the shared one is not."""
        rig = Rig()
        rig.fast.produce("t", b"v", b"k", headers=[("a", b"1"), ("b", "2")])
        rig.fast.produce("t", b"v", b"k")
        per_message, shared = rig.inner.calls[0][4], rig.inner.calls[1][4]
        assert not gc.is_tracked(per_message) and gc.is_tracked(shared)

    @pytest.mark.parametrize(
        "headers",
        [[("a", b"1"), ("b", "2"), ("c", None)], {"a": b"1"}, [("a", bytearray(b"1"))], [("a", b"1", "x")]],
    )
    def test_a_failed_report_gets_its_headers_back_as_given(self, headers: Any) -> None:
        """The failed message's report carries the headers, equal to the ones produced (a list stays a list)."""
        rig = Rig()
        rig.fast.produce("t", b"v", b"k", headers=headers)
        reporter = rig.inner.calls[-1][4]
        got: list[Any] = []

        class Msg(FakeMsg):
            def set_headers(self, h: Any) -> None:
                got.append(h)

        reporter("boom", Msg("t", rig.inner.calls[-1][3]))
        assert got == [headers] and type(got[0]) is type(headers)

    def test_errors_go_to_python(self) -> None:
        """A failed report takes _on_report; the C reporter counts nothing for it."""
        rig = Rig()
        reporter = self._sent(rig, None)
        p = rig.inner.calls[-1][3]
        reporter("boom", FakeMsg("t", p))
        assert [r[2] for r in rig.reports] == ["boom"] and rig.tally.reported[p] == 0

    def test_a_cold_partitions_first_delivery_warms_it_without_python(self) -> None:
        """The first success of a partition that never delivered marks what was sent so far as not judged (warm =
        sent), in C: no _on_report, counted as reported but not judged; a message sent after it is judged."""
        rig = Rig()
        reporter = self._sent(rig, None)
        p = rig.inner.calls[-1][3]
        rig.tally.warm[p] = -1
        sent = rig.tally.sent[p]
        reporter(None, FakeMsg("t", p))
        assert rig.reports == []
        assert rig.tally.warm[p] == sent and rig.tally.reported[p] == 1 and rig.tally.ok[p] == 0
        rig.tally.sent[p] += 1  # one more message of the partition, sent after it warmed
        reporter(None, FakeMsg("t", p))
        assert rig.tally.reported[p] == 2 and rig.tally.ok[p] == 1 and rig.reports == []

    def test_exception_in_a_direct_callback_propagates(self) -> None:
        """A callback's exception reaches the poll that ran it, as with the plain client."""
        rig = Rig()

        def bad(err: Any, msg: Any) -> None:
            raise ValueError("app bug")

        reporter = self._sent(rig, bad)
        previous = rig.fast.enter_direct()
        try:
            with pytest.raises(ValueError, match="app bug"):
                reporter(None, FakeMsg("t", rig.inner.calls[-1][3]))
        finally:
            rig.fast.leave_direct(previous)
        assert rig.tracker.totals.delivered == 1  # counted before the callback ran


class TestAccel:
    def test_counts_have_every_total(self) -> None:
        """The C Counts carry every producer-wide total the metrics read."""
        names = {"sent_total", "reported_total", "produced", "delivered", "buffer_errors", "rerouted"}
        assert names <= set(dir(fp.Counts()))


# ---------------------------------------------------------------------------------------------------------
# Reentrancy, several pollers, misuse from Python (issue: the C fast path must never crash or misjudge)
# ---------------------------------------------------------------------------------------------------------


class NestingInner(FakeInner):
    """A stand-in whose produce() queues a success report and whose poll() records how deeply it is nested
    (confluent-kafka aborts the process when its poll() runs inside one of its own delivery callbacks)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.max_depth = 0

    def produce(self, *args: Any) -> None:
        super().produce(*args)
        self.pending.append((args[4], None, FakeMsg(args[0], args[3])))

    def poll(self, timeout: float = 0) -> int:
        self.depth += 1
        self.max_depth = max(self.max_depth, self.depth)
        try:
            return super().poll(timeout)
        finally:
            self.depth -= 1


def _isolated(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (a crash must fail the test, not the test run); the debug allocator
    poisons freed memory so a use-after-free shows."""
    # under the sanitizer step (PYTHONMALLOC=malloc, PYTHONPATH naming the sanitized build) those stay as set
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {"PYTHONMALLOC": "debug", **os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-P", "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=env
    )


class TestReentrancy:
    def test_a_callback_that_produces_never_nests_librdkafkas_poll(self) -> None:
        """A delivery callback run inside the app's poll may produce; produce() then never polls the wrapped
        producer from inside that poll, even when its inline-poll budget is due."""
        rig = Rig(sticky_bytes=0, inline_poll_every=1)
        rig.inner = NestingInner()
        rig.fast = fp.FastPath(
            inner_produce=rig.inner.produce, inner_poll=rig.inner.poll, snapshots=rig.snapshots,
            tallies=rig.tracker.topics, holds=rig.holds, slow_produce=rig._slow, on_report=rig._on_report,
            queue=rig.queue, picker=rig._pick, default_cb=None, counts=rig.tracker.totals,
            key_mode=fp.KP_CONSISTENT_RANDOM, only_errors=0, sticky_bytes=0, linger_s=60.0, inline_poll_every=1,
            queue_max_messages=1000,
        )
        follow_ups: list[Any] = []

        def chain(err: Any, msg: Any) -> None:
            if len(follow_ups) < 50:
                follow_ups.append(msg)
                rig.fast.produce("t", b"follow-up", on_delivery=chain)

        token = rig.fast.enter_direct()
        try:
            rig.fast.produce("t", b"first", on_delivery=chain)
            rig.inner.poll(0)
        finally:
            rig.fast.leave_direct(token)
        assert rig.inner.max_depth == 1 and len(follow_ups) == 50
        assert rig.tracker.totals.produced == 51 and rig.slow_calls == []

    def test_inline_polls_still_happen_outside_any_poll(self) -> None:
        """Outside every poll, produce() still serves reports inline once its budget is due (queued)."""
        rig = Rig(sticky_bytes=0, inline_poll_every=2)
        for _ in range(4):
            rig.fast.produce("t", b"v")
        assert rig.fast.inline_polls == 2 and rig.fast.polling() == 0

    def test_pollers_leaving_out_of_order_leave_nothing_stale(self) -> None:
        """Two threads in the app's poll that leave in the other order than they entered: afterwards no thread
        counts as polling, and a report served on the first thread is queued, never run inside produce()."""
        rig = Rig()
        got: list[Any] = []
        rig.fast.produce("t", b"v", on_delivery=lambda err, msg: got.append(msg))
        reporter = rig.inner.calls[-1][4]
        p = rig.inner.calls[-1][3]
        t2_entered, t1_left, t2_left = threading.Event(), threading.Event(), threading.Event()

        def second() -> None:
            token = rig.fast.enter_direct()
            t2_entered.set()
            t1_left.wait(10)
            rig.fast.leave_direct(token)
            t2_left.set()

        token = rig.fast.enter_direct()
        worker = threading.Thread(target=second)
        worker.start()
        assert t2_entered.wait(10)
        assert rig.fast.app_pollers == 2
        rig.fast.leave_direct(token)
        t1_left.set()
        assert t2_left.wait(10)
        worker.join(10)
        assert rig.fast.app_pollers == 0 and rig.fast.polling() == 0
        reporter(None, FakeMsg("t", p))
        assert got == [] and len(rig.queue) == 1

    def test_each_thread_sees_only_its_own_poll(self) -> None:
        """While one thread is in the app's poll, a report on another thread is queued (and vice versa)."""
        rig = Rig()
        got: list[Any] = []
        rig.fast.produce("t", b"v", on_delivery=lambda err, msg: got.append(msg))
        reporter, p = rig.inner.calls[-1][4], rig.inner.calls[-1][3]
        seen: list[int] = []

        def other() -> None:
            seen.append(rig.fast.polling())
            reporter(None, FakeMsg("t", p))

        token = rig.fast.enter_direct()
        try:
            worker = threading.Thread(target=other)
            worker.start()
            worker.join(10)
            assert rig.fast.polling() == 1
        finally:
            rig.fast.leave_direct(token)
        assert seen == [0] and got == [] and len(rig.queue) == 1

    def test_leave_without_enter_is_refused(self) -> None:
        """A token that does not match this thread's poll is a clear error, and changes nothing."""
        rig = Rig()
        with pytest.raises(RuntimeError, match="not inside"):
            rig.fast.leave_direct(0)
        assert rig.fast.app_pollers == 0

    def test_reporter_cache_survives_a_finalizer_that_produces(self) -> None:
        """Dropping the cached reporters (at 512 callbacks) may run a callback's finalizer that produces with that
        very callback: it gets a live reporter, and every report reaches the right callback."""
        result = _isolated(
            """
            from test_fastpath import Rig, FakeMsg
            rig = Rig(sticky_bytes=0)
            ran = {}

            class Callback:
                def __init__(self, n):
                    self.n = n
                def __call__(self, err, msg):
                    ran[self.n] = ran.get(self.n, 0) + 1
                def __del__(self):
                    if self.n == 511:  # the cached one when the cache is dropped
                        rig.fast.produce("t", b"from-finalizer", on_delivery=self)

            def deliver():  # librdkafka drops its reference to the reporter once the report is served
                token = rig.fast.enter_direct()
                while rig.inner.calls:
                    call = rig.inner.calls.pop(0)
                    call[4](None, FakeMsg("t", call[3]))
                rig.fast.leave_direct(token)

            sent = 0
            for n in range(600):
                rig.fast.produce("t", b"v", on_delivery=Callback(n))
                sent += 1
                deliver()
            deliver()
            assert ran[511] == 2 and all(ran[n] == 1 for n in range(600) if n != 511), ran
            print("ok", rig.tracker.totals.produced)
            """
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.split() == ["ok", "601"]


class TestMisuse:
    def test_fastpath_without_init_raises(self) -> None:
        """FastPath.__new__ alone gives an object whose produce() raises instead of crashing."""
        result = _isolated(
            """
            from mutepro.producer import _fastpath as fp
            f = fp.FastPath.__new__(fp.FastPath)
            try:
                f.produce("t", b"v")
            except RuntimeError as err:
                print("refused:", err)
            """
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert "refused: FastPath.__init__ was not called" in result.stdout

    def test_absurd_partition_counts_are_refused(self) -> None:
        """A tally of 2**40 partitions and a key hashed over 2**32 partitions are ValueErrors, not a crash/hang."""
        result = _isolated(
            """
            from mutepro.producer import _fastpath as fp
            for make in (lambda: fp.Tally(2**40, 0.5), lambda: fp.Tally(1, 0.5).grow(2**62),
                         lambda: fp.key_partition(fp.KP_MURMUR2, b"k", 2**32)):
                try:
                    make()
                except (ValueError, OverflowError) as err:
                    print("refused:", type(err).__name__)
            """
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.count("refused:") == 3

    def test_negative_index_past_the_start_is_an_index_error(self) -> None:
        """col[-4] of a 3-partition column is an IndexError (not col[2])."""
        t = fp.Tally(3, 0.5)
        t.sent[2] = 7
        assert t.sent[-1] == 7
        with pytest.raises(IndexError):
            t.sent[-4]
        with pytest.raises(IndexError):
            t.sent[-4] = 1

    def test_a_column_kept_by_its_tally_is_collected(self) -> None:
        """A column stored on its own tally forms a cycle the garbage collector frees."""
        t = fp.Tally(2, 0.5)
        t.kept = t.sent
        ref = weakref.ref(t)
        del t
        gc.collect()
        assert ref() is None


def _purged(partition: int, latency: float | None = 0.5) -> confluent_kafka.Message:
    err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._PURGE_QUEUE)
    if latency is None:
        return confluent_kafka.Message(topic="t", partition=partition, value=b"v", error=err)
    return confluent_kafka.Message(topic="t", partition=partition, value=b"v", latency=latency, error=err)


class TestSend:
    def test_sends_positionally_with_a_c_reporter_and_counts(self) -> None:
        """send() hands the message to the wrapped produce() positionally (short form without timestamp and
        headers) with a C reporter, and counts sent, sent bytes and the total."""
        rig = Rig()
        assert rig.fast.send("t", b"abc", b"k", 3, None, 0, None, 0) is None
        call = rig.inner.calls[-1]
        assert call[:4] == ("t", b"abc", b"k", 3) and len(call) == 5 and type(call[4]).__name__ == "Reporter"
        assert rig.tally.sent[3] == 1 and rig.tally.sent_bytes[3] == 3 and rig.tracker.sent_total == 1
        rig.fast.send("t", "héllo", None, 3, None, 7, [("h", b"1")], 0)
        assert rig.inner.calls[-1][6:] == (7, [("h", b"1")]) and rig.tally.sent_bytes[3] == 8

    def test_a_rescued_messages_failure_reaches_python_with_its_kind_and_headers(self) -> None:
        """A RESCUED message (kind 8) that fails goes to on_report with kind 8 and its headers set back."""
        rig = Rig()
        rig.fast.send("t", b"v", None, 2, None, 0, [("x-mutepro-rescued-from", b"5")], 8)
        reporter = rig.inner.calls[-1][4]
        err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._MSG_TIMED_OUT)
        msg = confluent_kafka.Message(topic="t", partition=2, value=b"v", error=err)
        reporter(err, msg)
        assert [(kind, e.code()) for _, kind, e, _ in rig.reports] == [(8, err.code())]
        assert msg.headers() == [("x-mutepro-rescued-from", b"5")]

    def test_a_probes_success_reaches_python_uncounted_by_c(self) -> None:
        """A PROBE (kind 4) that succeeds goes to on_report with kind 4 (its breaker is answered there) and C
        counts nothing for it; an EXPLICIT one (kind 1) is counted by the C reporter like a normal message."""
        rig = Rig()
        rig.fast.send("t", b"v", None, 2, None, 0, None, 4)
        rig.inner.calls[-1][4](None, FakeMsg("t", 2))
        assert [kind for _, kind, _, _ in rig.reports] == [4] and rig.tally.reported[2] == 0
        rig.fast.send("t", b"v", None, 2, None, 0, None, 1)
        rig.inner.calls[-1][4](None, FakeMsg("t", 2))
        assert len(rig.reports) == 1 and rig.tally.reported[2] == 1

    def test_a_timestamp_beyond_a_c_long_is_passed_on_as_given(self) -> None:
        """A timestamp too large for a C long goes to the wrapped produce() unchanged (the long call), which
        decides; send() does not fail on it itself."""
        rig = Rig()
        rig.fast.send("t", b"v", None, 1, None, 1 << 70, None, 0)
        assert rig.inner.calls[-1][6] == 1 << 70 and rig.tally.sent[1] == 1

    def test_a_full_queue_raises_and_counts_nothing(self) -> None:
        """BufferError from the wrapped produce() reaches the caller; nothing is counted."""
        rig = Rig()
        rig.inner.full = True
        with pytest.raises(BufferError):
            rig.fast.send("t", b"v", None, 1, None, 0, None, 0)
        assert rig.tally.sent[1] == 0 and rig.tracker.sent_total == 0

    def test_untracked_partitions_and_topics_go_uncounted(self) -> None:
        """A partition outside the tally, a topic without one, or UNASSIGNED (-1) is sent uncounted (kind
        UNCOUNTED added, only sent_total counted): the one send path, Python's uncounted sends included."""
        rig = Rig()
        rig.fast.send("t", b"v", None, 6, None, 0, None, 0)
        rig.fast.send("other", b"v", None, -1, None, 0, None, 0)
        assert [c[:4] for c in rig.inner.calls] == [("t", b"v", None, 6), ("other", b"v", None, -1)]
        assert rig.tracker.sent_total == 2 and sum(rig.tally.sent) == 0

    def test_an_uncounted_reports_go_to_python_with_their_headers(self) -> None:
        """An uncounted message's success and failure both go on to on_report with kind UNCOUNTED (2): Python
        marks the topic placed, counts it; a failure gets its headers back first (what message.keeping_headers
        did for Python's own uncounted sends)."""
        rig = Rig()
        headers = [("h", b"1")]
        rig.fast.send("other", b"v", None, -1, None, 0, headers, 0)
        reporter = rig.inner.calls[-1][4]
        reporter(None, FakeMsg("other", 3))
        err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._MSG_TIMED_OUT)
        msg = confluent_kafka.Message(topic="other", partition=3, value=b"v", error=err)
        reporter(err, msg)
        assert [(kind, e) for _, kind, e, _ in rig.reports] == [(2, None), (2, err)]
        assert msg.headers() == headers and rig.tally.reported[3] == 0

    def test_an_uncounted_purge_goes_to_the_rescues_sink(self) -> None:
        """While a rescue collects (purge_sink set), an uncounted message's purge report is collected by C like
        any other (reported_total counted, no tally), with its headers back: no Python collection path."""
        rig = Rig()
        rig.fast.send("other", b"v", None, -1, None, 0, [("h", b"1")], 0)
        sink: list[Any] = []
        rig.fast.purge_sink = sink
        err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._PURGE_QUEUE)
        msg = confluent_kafka.Message(topic="other", partition=-1, value=b"v", error=err)
        rig.inner.calls[-1][4](err, msg)
        rig.fast.purge_sink = None
        assert [(kind, m) for _, _, kind, m in sink] == [(2, msg)] and rig.reports == []
        assert msg.headers() == [("h", b"1")] and rig.tracker.reported_total == 1

    def test_an_unhashable_callback_gets_a_reporter_of_its_own(self) -> None:
        """A callable that cannot be a cache key still gets its report."""

        class Unhashable:
            __hash__ = None  # type: ignore[assignment]

            def __init__(self) -> None:
                self.got: list[Any] = []

            def __call__(self, err: Any, msg: Any) -> None:
                self.got.append(msg)

        rig = Rig()
        cb = Unhashable()
        rig.fast.send("t", b"v", None, 1, cb, 0, None, 0)
        rig.inner.calls[-1][4](None, FakeMsg("t", 1))
        rig.queue.serve(0)
        assert len(cb.got) == 1 and rig.tally.reported[1] == 1


class TestExplicitPartition:
    def test_an_explicit_partition_goes_as_given_in_c(self) -> None:
        """partition=p is sent to p without the picker or Python, and counted there."""
        rig = Rig()
        for i in range(12):
            assert rig.fast.produce("t", value=b"v", partition=i % 6, on_delivery=print) is None
        assert [c[3] for c in rig.inner.calls] == [i % 6 for i in range(12)]
        assert rig.slow_calls == [] and rig.picks == 0
        assert list(rig.tally.sent) == [2] * 6 and rig.tracker.totals.produced == 12

    def test_minus_one_still_means_choose_for_me(self) -> None:
        """partition=-1 is the sticky choice, as before."""
        rig = Rig()
        rig.fast.produce("t", b"v", partition=-1)
        assert rig.picks == 1 and rig.inner.calls[0][3] == 5

    def test_a_muted_or_half_open_partition_is_still_written_when_named(self) -> None:
        """An explicit partition is never moved: muted or probing, it goes where the application said."""
        rig = Rig(muted=frozenset({2}))
        rig.snapshots["t"] = TopicSnapshot.build("t", 6, frozenset({2}), None, probing=frozenset({2}))
        assert rig.fast.produce("t", b"v", b"k", 2) is None
        assert rig.inner.calls[0][3] == 2 and rig.slow_calls == []
        assert rig.fast.produce("t", b"v") == "slow"  # unkeyed: a probe may be due, Python decides

    def test_its_reporter_carries_the_explicit_kind(self) -> None:
        """A purged explicit message reaches the rescue as EXPLICIT (requeued to its partition, never moved)."""
        rig = Rig()
        rig.fast.produce("t", b"v", partition=3, on_delivery=print)
        rig.fast.produce("t", b"v", on_delivery=print)
        explicit, chosen = rig.inner.calls[0][4], rig.inner.calls[1][4]
        assert explicit is not chosen
        rig.fast.produce("t", b"v", partition=3, on_delivery=print)
        assert rig.inner.calls[2][4] is explicit  # cached like the others
        sink: list[Any] = []
        rig.fast.purge_sink = sink
        msg = _purged(3)
        explicit(msg.error(), msg)
        assert [kind for _, _, kind, _ in sink] == [EXPLICIT]

    def test_delivery_reports_are_counted_and_reach_the_callback(self) -> None:
        """The explicit reporter counts the report and queues the application's callback as any other."""
        rig = Rig()
        got: list[Any] = []
        rig.fast.produce("t", b"v", partition=4, on_delivery=lambda err, msg: got.append((err, msg.partition())))
        rig.inner.calls[0][4](None, FakeMsg("t", 4))
        rig.queue.serve(0)
        assert got == [(None, 4)] and rig.tally.reported[4] == 1 and rig.tally.ok[4] == 1


class TestPurgeSink:
    def test_purge_reports_are_appended_and_counted_without_python(self) -> None:
        """With a sink set, a purged fast-path message is counted as reported and appended as (enqueued, cb,
        kind, msg), enqueued = now - latency; on_report is not called."""
        rig = Rig()
        cb = print
        rig.fast.produce("t", b"v", partition=-1, on_delivery=cb)
        p, reporter = rig.inner.calls[-1][3], rig.inner.calls[-1][4]
        sink: list[Any] = []
        rig.fast.purge_sink = sink
        msg = _purged(p, latency=0.5)
        before = time.monotonic()
        reporter(msg.error(), msg)
        assert rig.reports == [] and rig.tally.reported[p] == 1 and rig.tracker.reported_total == 1
        [(enqueued, got_cb, kind, got_msg)] = sink
        assert got_cb is cb and kind == 0 and got_msg is msg
        assert before - 0.5 <= enqueued <= time.monotonic() - 0.5

    def test_other_errors_and_no_sink_go_to_python(self) -> None:
        """A timeout with a sink set, or a purge without one, takes the usual way to on_report."""
        rig = Rig()
        rig.fast.produce("t", b"v")
        p, reporter = rig.inner.calls[-1][3], rig.inner.calls[-1][4]
        rig.fast.purge_sink = []
        err = confluent_kafka.KafkaError(confluent_kafka.KafkaError._MSG_TIMED_OUT)
        reporter(err, confluent_kafka.Message(topic="t", partition=p, error=err))
        rig.fast.purge_sink = None
        msg = _purged(p)
        reporter(msg.error(), msg)
        assert [e.code() for _, _, e, _ in rig.reports] == [err.code(), msg.error().code()]
        assert rig.tally.reported[p] == 0  # on_report (the stand-in here) does the counting

    def test_a_purged_message_with_headers_gets_them_back_and_no_latency_is_none(self) -> None:
        """The per-message reporter sets the headers back on the purged message; no latency -> enqueued None."""
        rig = Rig()
        rig.fast.send("t", b"v", None, 4, None, 0, [("h", b"1")], 8)
        reporter = rig.inner.calls[-1][4]
        sink: list[Any] = []
        rig.fast.purge_sink = sink
        msg = _purged(4, latency=None)
        reporter(msg.error(), msg)
        assert sink == [(None, None, 8, msg)] and msg.headers() == [("h", b"1")]

    def test_only_a_list_or_none(self) -> None:
        """purge_sink refuses anything but a list or None."""
        rig = Rig()
        with pytest.raises(TypeError, match="purge_sink"):
            rig.fast.purge_sink = ()  # type: ignore[assignment]
        assert rig.fast.purge_sink is None
