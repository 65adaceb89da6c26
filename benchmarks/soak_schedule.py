"""The soak's fault schedule: seeded, printed, replayable; never more than one broker faulted at a time.

Two tracks run side by side: brokers (stall, limp, kill + restart, preferred-leader election) one fault after
another, and Redis restarts. The last ``quiet_s`` seconds carry no fault, so the run can show that mutes clear
and memory stays flat once the cluster is healthy again.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass

BROKER_KINDS = ("stall", "limp", "kill", "leader_move")


@dataclass(frozen=True)
class Fault:
    """One planned fault: ``at`` seconds after the load starts, on ``target`` (a broker id, or 0 for Redis)."""

    at: float
    kind: str  # stall | limp | kill | leader_move | redis_restart
    target: int
    duration: float

    def describe(self) -> str:
        where = "redis" if self.kind == "redis_restart" else f"broker {self.target}"
        return f"t+{self.at:6.1f}s {self.kind:<13} {where:<8} for {self.duration:4.1f}s"


def build_schedule(
    seed: int, duration_s: float, quiet_s: float, brokers: int = 3, warmup_s: float = 5.0
) -> list[Fault]:
    """The faults of one run, sorted by start time. Same seed and durations, same schedule."""
    rng = random.Random(seed)
    end = duration_s - quiet_s
    faults: list[Fault] = []
    t = warmup_s + rng.uniform(0, 3)
    weights = (3, 2, 3, 1)
    while True:
        kind = rng.choices(BROKER_KINDS, weights)[0]
        target = rng.randint(1, brokers)
        length = {
            "stall": rng.uniform(4, 12),
            "limp": rng.uniform(6, 14),
            "kill": rng.uniform(3, 8),  # then restarted: the broker is back ~10 s later
            "leader_move": 0.0,
        }[kind]
        if t + length + (12 if kind == "kill" else 0) > end:
            break
        faults.append(Fault(round(t, 1), kind, target, round(length, 1)))
        t += length + (12 if kind == "kill" else 0) + rng.uniform(3, 9)
    t = warmup_s + rng.uniform(5, 20)
    while True:
        length = rng.uniform(3, 8)
        if t + length > end:
            break
        faults.append(Fault(round(t, 1), "redis_restart", 0, round(length, 1)))
        t += length + rng.uniform(20, 60)
    return sorted(faults, key=lambda f: f.at)


def schedule_json(faults: list[Fault]) -> str:
    """The schedule as one JSON line (quoted in reports so a failing run can be replayed and compared)."""
    return json.dumps([asdict(f) for f in faults])
