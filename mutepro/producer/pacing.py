"""When the driver's next round is due: every tick while there is anything to judge, once a second while the
producer is idle, and at once when the application sends again.

Why park: each wake-up of a thread costs CPU even when its round finds nothing to do -- on the project's 2-core
machine ~90 us for a Python ``Event.wait`` returning after 50 ms, ~200 us with an empty driver round (caches
gone) -- so a driver ticking every 50 ms cost an idle producer ~5 ms of CPU a second, 5-10x what the plain client
spends waiting in ``poll(1.0)`` (~0.5-1 ms a second). Parked, it wakes once a second (:data:`IDLE_ROUND_S`).

What a parked round may be late for, and why that is none of the mute decisions:

- a message sent while parked: the tracker dates each message by the first round that counts it (see
  :mod:`mutepro.producer.tracker`), so the first send wakes the driver at once (:meth:`Pacer.park` hooks every send
  path: the C fast path's ``on_send``, and :attr:`Pacer.parked` read by the Python ones);
- a mute decided by the application (``mute_manager.mute``): the producer wakes the driver on every mute event;
- idle partitions: the mute manager looks at them once a second anyway (``QUIET_REJUDGE_S``), which is also when
  their breakers adopt a shared store's records; librdkafka's statistics (broker-level detection) arrive once a
  second too (``statistics.interval.ms`` 1000).

The driver parks only after a whole round found nothing new (:meth:`~mutepro.producer.driver.Driver.idle`), so
the last reports before a pause are judged on time.
"""

from __future__ import annotations

import threading
from typing import Any

#: How long a parked driver sleeps at most: the mute manager's own cadence for idle partitions.
IDLE_ROUND_S = 1.0


class Pacer:
    """Parks and wakes one producer's driver thread (see the module docstring)."""

    def __init__(self, fast: Any = None) -> None:
        #: set by :meth:`wake`; the driver sleeps on it, clearing it when it wakes (close() sets it too: a parked
        #: driver ends at once)
        self.event = threading.Event()
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
        self.event.set()
