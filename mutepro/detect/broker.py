"""Broker-level detection: mute every partition a broker leads when the broker as a whole is bad."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping

from mutepro.detect.failure_rate import check_minimum
from mutepro.detect.model import MuteReason, Verdict
from mutepro.detect.stats import StatsSnapshot
from mutepro.errors import ConfigError

# States in which a broker is not counted as down. INIT: librdkafka connects sparsely (only to brokers it
# needs), so a broker it never talked to stays in INIT forever without anything being wrong. UPDATE: a
# transient state while the broker's address is updated from metadata.
_NOT_DOWN = frozenset({"UP", "INIT", "UPDATE"})

_Add = Callable[[int, str, Mapping[str, float | int | str]], None]  # (broker id, cause, figures)


class BrokerDetector:
    """Judges brokers from partition verdicts and librdkafka statistics; one instance per producer.

    A broker gets a ``"broker"`` verdict when any of these hold (the ``cause`` detail lists every one that
    did):

    * ``bad_partitions`` — at least ``min_bad_partitions`` of the partitions it leads are muted by their own
      evidence, and at least ``min_bad_pct`` % of those it leads that the producer writes to (several
      partitions failing together point at their common leader, not at the partitions). The share is what
      scales: 12 partitions on 3 brokers, 4 written per broker: 2 bad suffice (25 % of 4 is 1); 1,200
      partitions, 400 per broker: 100 must be bad. With the absolute 2 alone, a saturated producer's few
      partitions that waited longest in its own queue at start-up (seen: 7 of 1,200, spread over all three
      brokers) muted all three brokers, 1,200 healthy partitions;
    * ``down`` — librdkafka reports it in a state other than UP (and other than INIT/UPDATE, see above) for
      at least ``down_grace_s`` seconds while it still leads a partition (a broker leading nothing has
      nothing to mute). The time counted is the longer of what this detector has watched and librdkafka's
      ``stateage``;
    * ``latency`` — its rtt p99 is more than ``latency_factor`` x the median rtt p99 of the *other* UP brokers
      that have rtt samples, and more than ``min_latency_ms``; this needs at least 2 other brokers to compare
      with (with one other broker "the others" is a single opinion). Example: p99s of 4, 5 and 60 ms with
      factor 5 and min 20 ms: 60 > 5 x median(4, 5) = 22.5 and 60 > 20, so the third broker is muted. It must
      hold in ``latency_snapshots`` statistics emissions in a row: one emission's p99 can be a single hiccup
      (seen on a CPU-starved 2-core box: 524 ms against a median of 104 ms for one second, then normal), and a
      broker that is really stalled is muted through its partitions' slow calls within the slow threshold
      anyway. A latency verdict then *holds* for ``latency_hold_s`` after the last slow emission, doubling
      each time the broker is caught again within the hold (``latency_max_hold_s`` at most), and starting
      over once it has been fine for a whole maximum hold. Why: once muted, a broker gets no produce traffic
      and its rtt p99 says nothing (no samples, or a lone metadata request): without the hold, a limping
      broker (stopped 800 ms of every second) was unmuted a second after its mute, took traffic, was muted
      again two emissions later, and so on while the fault lasted. With the defaults (5 s, 60 s) a broker
      limping for a minute is muted, exposed for about 2 s after 5 s, then 10 s, 20 s, 40 s: 4 exposures.

    Unmuting is the manager's job: it drops the broker verdict once ``evaluate`` stops returning it and moves
    partitions whose leadership went to a healthy broker.
    """

    name: str = MuteReason.BROKER

    def __init__(
        self,
        min_bad_partitions: int,
        latency_factor: float,
        min_latency_ms: float,
        down_grace_s: float = 2.0,
        latency_snapshots: int = 1,
        latency_hold_s: float = 5.0,
        latency_max_hold_s: float = 60.0,
        min_bad_pct: float = 0.0,
    ) -> None:
        self.min_bad_partitions = check_minimum("broker.min_bad_partitions", min_bad_partitions)
        if not 0 <= min_bad_pct <= 100:
            raise ConfigError(f"broker.min_bad_pct must be a percentage in [0, 100] (e.g. 25), got {min_bad_pct!r}")
        self.min_bad_pct = float(min_bad_pct)
        if not latency_factor > 1.0:
            raise ConfigError(f"broker.latency_factor must be > 1 (e.g. 5), got {latency_factor!r}")
        if not min_latency_ms >= 0:
            raise ConfigError(f"broker.min_latency_ms must be >= 0 milliseconds, got {min_latency_ms!r}")
        if not down_grace_s >= 0:
            raise ConfigError(f"broker.down_grace_s must be >= 0 seconds, got {down_grace_s!r}")
        self.latency_factor = float(latency_factor)
        self.min_latency_ms = float(min_latency_ms)
        self.down_grace_s = float(down_grace_s)
        self.latency_snapshots = check_minimum("broker.latency_snapshots", latency_snapshots)
        if not 0 <= latency_hold_s <= latency_max_hold_s:
            raise ConfigError(
                f"broker latency hold: need 0 <= latency_hold_s <= latency_max_hold_s, got {latency_hold_s!r} and "
                f"{latency_max_hold_s!r}"
            )
        self.latency_hold_s = float(latency_hold_s)
        self.latency_max_hold_s = float(latency_max_hold_s)
        # broker -> (held until, hold length, the figures of its last slow emission)
        self._latency_held: dict[int, tuple[float, float, dict[str, float | int | str]]] = {}
        self._down_since: dict[int, float] = {}
        self._slow_streak: dict[int, int] = {}  # broker -> statistics emissions in a row over the latency rule
        self._streak_stats: StatsSnapshot | None = None  # the emission the streaks last counted
        self._streak_seen_at = 0.0  # ... and when this detector first saw it

    def evaluate(
        self,
        stats: StatsSnapshot | None,
        bad_partitions_by_leader: Mapping[int, int],
        now: float,
        shown_by_leader: Mapping[int, int] | None = None,
    ) -> dict[int, Verdict]:
        """Return broker id -> why all its partitions should be muted (empty when every broker is fine).

        ``shown_by_leader``: per broker, the partitions the ``min_bad_pct`` share is of
        (:func:`mutepro.mute.brokers.shown_by_leader`: every partition written to, or only the bad ones of a
        broker that answers nothing); without it only ``min_bad_partitions`` counts."""
        found: dict[int, dict[str, float | int | str]] = {}

        def add(node: int, cause: str, figures: Mapping[str, float | int | str]) -> None:
            entry = found.setdefault(node, {"broker_id": node})
            entry["cause"] = f"{entry['cause']},{cause}" if "cause" in entry else cause
            entry.update(figures)

        shown = shown_by_leader or {}
        for node, bad in bad_partitions_by_leader.items():
            needed = self.bad_partitions_needed(shown.get(node, 0))
            if node >= 0 and bad >= needed:
                add(node, "bad_partitions", {"bad_partitions": bad, "needed": needed, "shown": shown.get(node, 0)})

        if stats is not None:
            self._check_down(stats, now, add)
            self._check_latency(stats, now, add)
        self._hold_latency(now, found, add)

        return {node: Verdict(MuteReason.BROKER, detail) for node, detail in sorted(found.items())}

    def bad_partitions_needed(self, shown: int) -> int:
        """Own-evidence mutes needed to judge a broker when its share is of ``shown`` partitions."""
        # the 1e-9 keeps 25 % of 4 at 1, not 2 from a float a hair above 1.0
        return max(self.min_bad_partitions, math.ceil(self.min_bad_pct / 100.0 * shown - 1e-9))

    def _check_down(self, stats: StatsSnapshot, now: float, add: _Add) -> None:
        leading = {p.leader for p in stats.partitions.values()}
        for node, b in stats.brokers.items():
            if b.state in _NOT_DOWN:
                self._down_since.pop(node, None)
                continue
            since = self._down_since.setdefault(node, now)
            down_for = max(now - since, b.state_age_s)
            if down_for >= self.down_grace_s and node in leading:
                add(node, "down", {"state": b.state, "down_s": round(down_for, 3)})
        for node in list(self._down_since):
            if node not in stats.brokers:
                del self._down_since[node]  # gone from metadata: nothing left to judge

    def _hold_latency(self, now: float, found: Mapping[int, object], add: _Add) -> None:
        """Keep a broker caught by the latency rule muted until its hold ends (see the class docstring)."""
        for node, (until, hold, figures) in list(self._latency_held.items()):
            if now >= until + self.latency_max_hold_s:
                del self._latency_held[node]  # fine for a whole maximum hold: the next offence starts over
            elif now < until and node not in found:
                add(node, "latency", {
                    **figures, "held_until_s": round(until - now, 3), "hold_s": hold,
                    "evidence_age_s": round(now - (until - hold), 3),  # its last slow emission
                })

    def _caught(self, node: int, now: float, figures: dict[str, float | int | str]) -> None:
        held = self._latency_held.get(node)
        if held is None:
            hold = self.latency_hold_s
        elif now < held[0]:
            hold = held[1]  # still inside its hold: caught again by the same episode, same hold from now
        else:
            hold = min(held[1] * 2, self.latency_max_hold_s)  # back too soon: a longer hold
        self._latency_held[node] = (now + hold, hold, figures)

    def _check_latency(self, stats: StatsSnapshot, now: float, add: _Add) -> None:
        fresh = stats is not self._streak_stats  # evaluate runs every tick; emissions come every second or so
        if fresh:
            self._streak_stats, self._streak_seen_at = stats, now
        p99 = {n: b.rtt_p99_ms for n, b in stats.brokers.items() if b.state == "UP" and b.rtt_samples > 0}
        if len(p99) < 3:
            self._slow_streak.clear()
            return  # each broker needs >= 2 others to compare with
        for node, mine in p99.items():
            others = [v for n, v in p99.items() if n != node]
            median = statistics.median(others)
            if not (mine > self.latency_factor * median and mine > self.min_latency_ms):
                self._slow_streak.pop(node, None)
                continue
            if fresh:
                self._slow_streak[node] = self._slow_streak.get(node, 0) + 1
            if self._slow_streak.get(node, 0) >= self.latency_snapshots:
                figures: dict[str, float | int | str] = {
                    "rtt_p99_ms": round(mine, 3),
                    "median_rtt_p99_ms": round(median, 3),
                    "latency_factor": self.latency_factor,
                    "snapshots": self._slow_streak[node],
                    # how old the emission this rests on is: a verdict is re-given every round until the next one
                    "evidence_age_s": round(now - self._streak_seen_at, 3),
                }
                if fresh:
                    self._caught(node, now, figures)
                add(node, "latency", figures)
        for node in list(self._slow_streak):
            if node not in p99:
                del self._slow_streak[node]

    def reset(self) -> None:
        """Forget how long brokers have been seen down or slow."""
        self._down_since.clear()
        self._slow_streak.clear()
        self._streak_stats = None
        self._latency_held.clear()
