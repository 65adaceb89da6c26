"""When the driver's next round is due: every tick while there is anything to judge, not at all while the
producer is idle (once a second when other producers share its breaker store), and at once when the application
sends again.

Why park: each wake-up of a thread costs CPU even when its round finds nothing to do -- on the project's 2-core
machine ~90 us for a Python ``Event.wait`` returning after 50 ms, ~200 us with an empty driver round (caches
gone) -- so a driver ticking every 50 ms cost an idle producer ~5 ms of CPU a second, 5-10x what the plain client
spends waiting in ``poll(1.0)`` (~0.5-1 ms a second). Parked, it sleeps until woken -- or, when its breaker
store is shared with other producers, for :data:`IDLE_ROUND_S`, so that it adopts their mutes before its next
message goes out.

What a parked driver may be late for, and why that is none of the mute decisions:

- a message sent while parked: the tracker dates each message by the first round that counts it (see
  :mod:`mutepro.producer.tracker`), so the first send wakes the driver at once (:meth:`Pacer.park` hooks every send
  path: the C fast path's ``on_send``, and :attr:`Pacer.parked` read by the Python ones);
- a mute decided by the application (``mute_manager.mute``): the producer wakes the driver on every mute event;
- idle partitions: a round has nothing to judge there (no message outstanding, none sent or reported, so no
  detector's verdict can start); what an idle round does do is adopt a shared store's records, the mute
  manager's own cadence for idle partitions (once per ``slow_call.threshold_ms``), kept when the store is shared;
- messages sent before their topic's metadata loaded: they wait in librdkafka's own partitioner queue, in no
  partition a round could judge, so they do not keep the driver up; the metadata thread wakes it when their topic
  loads (``Driver.load_metadata``). With no broker answering, a driver ticking for them cost ~4.6 ms of CPU a
  second, 8x the plain client's whole ``poll(1.0)``;
- nothing muted, avoided, held or due for a rescue: the driver does not park then (breakers' retry timers,
  probes and rescues run on its rounds);
- librdkafka's statistics (broker-level detection, partition leaders): kept as they arrive and read by the
  first round after the pause (see ``Driver.on_stats``).

The driver parks only after a whole round found nothing new (:meth:`~mutepro.producer.driver.Driver.idle`), so
the last reports before a pause are judged on time.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

#: How long a parked driver sleeps at most when its breaker store is shared: the mute manager's own cadence for
#: idle partitions (their breakers adopt the store's records then).
IDLE_ROUND_S = 1.0


class Pacer:
    """Parks and wakes one producer's driver thread (see the module docstring)."""

    def __init__(self, fast: Any = None) -> None:
        #: what the driver sleeps on: ``gate.acquire(timeout=...)`` returns at once when :meth:`wake` opened it
        #: (and closes it again). A bare lock, not an Event: a driver waking 20 times a second paid ~100 us of CPU
        #: per ``Event.wait`` against ~60 for the lock on the project's 2-core machine (close() opens it too)
        self.gate = threading.Lock()
        self.gate.acquire()
        #: True while parked: a Python send path that sees it calls :meth:`wake`
        self.parked = False
        #: the C fast path (its produce() calls its ``on_send`` once), set by MuteProducer when it has one
        self.fast = fast

    def park(self) -> None:
        """From now on the next send wakes the driver. Called *before* the driver checks that nothing was sent
        since its round: a send before that check is seen by it, one after it finds the hook armed."""
        self.parked = True
        if self.fast is not None:
            self.fast.on_send = self.wake

    def unpark(self) -> None:
        self.parked = False
        if self.fast is not None:
            self.fast.on_send = None

    def wake(self) -> None:
        """The driver's next round is due now (a send while parked, a mute event, close)."""
        self.parked = False
        release(self.gate)


def release(gate: threading.Lock) -> None:
    """Open a :attr:`Pacer.gate` (it may be open already: then nothing to do)."""
    with contextlib.suppress(RuntimeError):
        gate.release()
