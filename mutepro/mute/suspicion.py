"""Steer first, mute on confirmation: one leader's outlier episodes in one topic.

A broker that stands out once -- its partitions' oldest undelivered messages far older than their peers' -- is
*avoided*: unkeyed messages go to other partitions until its messages are delivered again, and nothing else
changes (keyed messages still go home, nothing is rescued, no mute event). It is *muted* only in the
:data:`CONFIRM_EPISODES`-th *deep* episode of a chain -- deep: some message of it got older than the mute floor
``slow_call.outlier_min_ms`` (400 ms); a chain: each beginning within :data:`RECUR_S` of the previous one's end,
a shallow episode starting the chain over -- or when one episode lasts :data:`EPISODE_S`.

Why: a single stop of 0.4-0.9 s is what a limping broker does every second, and also what a healthy but busy
broker does now and then (a GC pause, a log roll, a page-cache flush under a saturating producer: seen in 3 of 8
twenty-second saturated runs on the local cluster). One episode cannot tell them apart; a second deep one can.
Counting shallow episodes was not enough: a healthy broker paused twice 4 s apart (0.15 s, then 0.42 s) in a
saturated 20 s run, and the second pause muted it. Counting three episodes instead held the limp's mute back by a
stop and raised the open-loop p99 of messages sent during the limp from 28 ms to 133 ms. A limping broker's every
stop is deep (0.8 s), so it is muted in its second stop.

Avoiding costs next to nothing (the sticky partitioner moves on to a peer), so it can start early -- at
``slow_call.avoid_min_ms`` (150 ms) instead of the mute floor -- and that is what keeps the tail low. Worked
numbers, open loop, 12 partitions on 3 brokers, one broker stopped 800 ms of every 1,000: a third of the traffic
heads for it; avoided 150 ms into the first stop and again 150 ms into the next, then muted once the second
episode's messages are 400 ms old, 2 x 0.15 s x 1/3 = 0.1 s worth of traffic is held up over a 20 s fault (0.5 %,
under the 1 % a p99 tolerates).
"""

from __future__ import annotations

#: an episode beginning within this many seconds of the previous one's end continues its chain
RECUR_S = 5.0
#: the deep episode of a chain that is a mute (the first is steered around only)
CONFIRM_EPISODES = 2
#: an episode lasting this long is confirmed on its own (a broker slow all the time, keyed traffic keeping it
#: busy): a pause of a healthy broker is over well before (the longest seen locally: 0.9 s)
EPISODE_S = 1.5


class Suspicion:
    """One leader's outlier episodes: ``since`` when the current one began (``None``: none now), ``deep`` whether
    it went past the mute floor, ``last_end``/``last_deep`` the previous one's end and depth, ``chain`` how many
    deep episodes in a row the current one would make."""

    __slots__ = ("chain", "deep", "last_deep", "last_end", "peak", "since")

    def __init__(self) -> None:
        self.since: float | None = None
        self.deep = False
        self.peak = 0.0  # the oldest age any of the leader's partitions reached during the current episode
        self.last_end: float | None = None
        self.last_deep = False
        self.chain = 0

    @property
    def active(self) -> bool:
        """Whether an episode is under way (the leader's partitions are avoided)."""
        return self.since is not None

    def begin(self, now: float) -> bool:
        """Mark the leader as standing out now; True when this starts a new episode."""
        if self.since is not None:
            return False
        follows_deep = self.last_deep and self.last_end is not None and now - self.last_end <= RECUR_S
        self.chain = self.chain + 1 if follows_deep else 1
        self.since, self.deep, self.peak = now, False, 0.0
        return True

    def mark_deep(self) -> None:
        """A message of the current episode got older than the mute floor."""
        self.deep = True

    def end(self, now: float) -> None:
        """The leader's partitions hold no old message any more: the episode is over."""
        if self.since is not None:
            self.since, self.last_end, self.last_deep = None, now, self.deep

    def confirmed(self, now: float) -> bool:
        """Whether standing out now is a mute: the CONFIRM_EPISODES-th deep episode of a chain (this one deep
        too), or one of EPISODE_S."""
        if self.since is None:
            return False
        return (self.deep and self.chain >= CONFIRM_EPISODES) or now - self.since >= EPISODE_S
