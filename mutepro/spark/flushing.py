"""The end of a task: wait for every row's delivery, in bounded time when a broker stalls.

A plain ``flush()`` waits for messages already in flight to a stalled broker until ``message.timeout.ms``,
although mutepro routed the task's other rows away within seconds; a half-open partition's probe stuck there
holds it the same way. The sink can do better than the plain client because its rows carry an identity
(``x-mutepro-id``, :mod:`mutepro.spark.identity`): a copy is told apart from its original by any reader
(:class:`~mutepro.spark.dedup.ReplayFilter`). So the task flushes in short steps, and once only muted partitions
still hold messages and the oldest has waited longer than the slow-call threshold (or was sent before its
partition was muted again after a failed probe), it asks the producer to take them back from librdkafka, in
flight included, and re-send them to writable partitions (the copies tagged
``x-mutepro-rescued-from``; probes among them count as failed). The stalled broker may still write the originals
once it resumes: duplicates with the same identity headers, dropped by the filter.

A task still succeeds only when every row has a successful delivery report (the original's or a copy's): a
purged message gets no success report, its copy has to earn one. An idempotent or transactional producer is
never purged (see :mod:`mutepro.producer.rescue`): there the task waits as before.
"""

from __future__ import annotations

import time
from typing import Protocol

#: How long one flush step waits before the task looks at what is still outstanding.
FLUSH_STEP_S = 0.2
#: In-flight rescues per task at most: a copy that gets stuck again (a second broker stalls) is rescued again,
#: but a task never loops on rescues; past this it waits like a plain flush.
MAX_RESCUES = 6
#: A message counts as stuck once it has waited this many times its topic's slow-call threshold (the sink's
#: default threshold is 5 s): about when the partition was muted for it.
STUCK_AFTER_SLOW_CALLS = 1.0


class Flushable(Protocol):
    """What the task's end needs of the producer (MuteProducer; a stand-in in unit tests)."""

    def flush(self, timeout: float = -1) -> int: ...

    def _rescue_in_flight(self, slow_calls: float = 1.0, hedge_after_s: float | None = None) -> int | None: ...


def flush_task(producer: Flushable, timeout_s: float | None, hedge_after_s: float | None = None) -> tuple[int, int]:
    """Flush ``producer`` (``timeout_s`` None: no limit), rescuing messages stuck on muted partitions.

    ``hedge_after_s`` (the ``mutepro.hedgeAfter`` option, 1 s by default; None: off): once every message still
    outstanding has waited that long while the rest were all answered, their brokers are muted and the
    messages re-sent at once, instead of after the slow-call threshold. Worked numbers from the stream
    benchmark (10,000-row micro-batches written in 0.12-0.22 s, broker 2 stalled): without it the stall rule
    muted at 5.0 s and the batch took 5.4 s; a healthy broker's pauses on the same box last up to ~1 s, which
    is where the default sits (a pause that long costs a few tagged duplicates, not a row).

    Returns (messages still outstanding when the timeout ran out, in-flight rescues done).
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    rescues = 0
    trying = True
    while True:
        step = FLUSH_STEP_S if deadline is None else max(0.0, min(FLUSH_STEP_S, deadline - time.monotonic()))
        left = producer.flush(step)
        if left == 0:
            return 0, rescues
        if deadline is not None and time.monotonic() >= deadline:
            return left, rescues
        if trying:
            moved = producer._rescue_in_flight(STUCK_AFTER_SLOW_CALLS, hedge_after_s)
            if moved is not None:
                rescues += 1
                # a rescue that moved nothing (every stuck message must stay where it is: an explicit
                # partition) would only purge the same messages again and again
                trying = moved > 0 and rescues < MAX_RESCUES
