"""Steer first, mute on confirmation: one leader's outlier episodes in one topic.

A broker that stands out once -- its partitions' oldest undelivered messages far older than their peers' -- is
*avoided*: unkeyed messages go to other partitions until its messages are delivered again, and nothing else
changes (keyed messages still go home, nothing is rescued, no mute event). It is *muted* only in the
:data:`CONFIRM_EPISODES`-th *deep* episode of a chain -- deep: some message of it got older than the mute floor
``slow_call.outlier_min_ms`` (400 ms); a chain: each beginning within ``slow_call.outlier_recur_ms`` (5 s) of the
previous one's end, a shallow episode starting the chain over -- or when one episode lasts
``slow_call.outlier_episode_ms`` (1.5 s).

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

#: the deep episode of a chain that is a mute: the first is steered around only, standing out *again* mutes. Not a
#: setting: "again" is what tells a fault from a pause (how close "again" must be is ``outlier_recur_ms``)
CONFIRM_EPISODES = 2


class Suspicion:
    """One leader's outlier episodes: ``since`` when the current one began (``None``: none now), ``deep`` whether
    it went past the mute floor, ``last_end``/``last_deep`` the previous one's end and depth, ``chain`` how many
    deep episodes in a row the current one would make. ``recur_s``: an episode beginning within this long of the
    previous one's end continues its chain (``slow_call.outlier_recur_ms``); ``episode_s``: an episode lasting
    this long is confirmed on its own (``slow_call.outlier_episode_ms``: a broker slow all the time, keyed traffic
    keeping it busy; a healthy broker's pause is over well before, the longest seen locally 0.9 s)."""

    __slots__ = ("chain", "deep", "episode_s", "last_deep", "last_end", "peak", "recur_s", "since")

    def __init__(self, recur_s: float, episode_s: float) -> None:
        self.recur_s = recur_s
        self.episode_s = episode_s
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
        follows_deep = self.last_deep and self.last_end is not None and now - self.last_end <= self.recur_s
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
        too), or one lasting ``episode_s``."""
        if self.since is None:
            return False
        return (self.deep and self.chain >= CONFIRM_EPISODES) or now - self.since >= self.episode_s
