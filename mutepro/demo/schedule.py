"""When the demo's broker misbehaves: a plan of phases (pure), and the bounded thread that carries it out.

The run is cut into *before* (a quarter: warm-up and the healthy baseline), the fault (45 %: limping, stalled,
or limping then stalled) and *after* (the rest: recovery, catch-up and unmuting). Times are seconds since the
jobs started.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from mutepro.errors import ConfigError

FAULTS = ("stall", "limp", "both")
#: The broker that misbehaves (rack-b): it leads a third of the demo topics' partitions.
FAULTY_BROKER = 2
#: Limping: stopped 80 % of every 3 s (2.4 s stops, 0.6 s of work), like a broker with a failing disk or long
#: GC pauses: requests are served, late.
LIMP_DUTY = 0.8
LIMP_PERIOD_S = 3.0
_BEFORE, _FAULT = 0.25, 0.45


@dataclass(frozen=True)
class Phase:
    """One stretch of the run: ``before``, ``limp``, ``stall`` or ``after``; ``[start_s, end_s)``."""

    name: str
    start_s: float
    end_s: float

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class FaultPlan:
    """The phases of one run, in order, covering ``[0, duration_s)``."""

    fault: str
    phases: tuple[Phase, ...]

    @property
    def duration_s(self) -> float:
        return self.phases[-1].end_s

    @property
    def window(self) -> tuple[float, float]:
        """Start and end of the fault (every phase between *before* and *after*)."""
        faulty = [p for p in self.phases if p.name not in ("before", "after")]
        return faulty[0].start_s, faulty[-1].end_s

    def phase_at(self, t: float) -> str:
        for p in self.phases:
            if p.start_s <= t < p.end_s:
                return p.name
        return "after" if t >= self.duration_s else "before"

    def as_dict(self) -> dict[str, Any]:
        return {"fault": self.fault, "broker": FAULTY_BROKER, "limp": {"duty": LIMP_DUTY, "period_s": LIMP_PERIOD_S},
                "phases": [vars(p) for p in self.phases]}


def plan_faults(duration_s: float, fault: str) -> FaultPlan:
    """Phases for a run of ``duration_s`` with ``fault`` (stall, limp or both: limp then stall)."""
    if fault not in FAULTS:
        raise ConfigError(f"--fault: expected one of {', '.join(FAULTS)}, got {fault!r}")
    if not 20 <= duration_s <= 1800:
        raise ConfigError(f"--duration: expected 20 to 1800 seconds, got {duration_s:g}")
    start = round(duration_s * _BEFORE, 1)
    end = round(duration_s * (_BEFORE + _FAULT), 1)
    faulty: tuple[Phase, ...]
    if fault == "both":
        middle = round((start + end) / 2, 1)
        faulty = (Phase("limp", start, middle), Phase("stall", middle, end))
    else:
        faulty = (Phase(fault, start, end),)
    return FaultPlan(fault, (Phase("before", 0.0, start), *faulty, Phase("after", end, float(duration_s))))


class FaultRunner:
    """Carries out a plan's faults on a mutepro-started cluster, on a bounded thread; always resumes the broker.

    ``started`` is the monotonic time the plan counts from. ``marks`` records when each fault phase really
    began and ended (seconds since ``started``): signals and the stall's wait-for-stopped take time.
    """

    def __init__(self, cluster: Any, plan: FaultPlan, started: float) -> None:
        self.cluster = cluster
        self.plan = plan
        self.started = started
        self.marks: list[tuple[str, float, float]] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mutepro-demo-faults", daemon=True)

    def start(self) -> FaultRunner:
        self._thread.start()
        return self

    def stop(self) -> None:
        """End any fault now (the broker runs again when this returns)."""
        self._stop.set()
        self._thread.join(30)

    def _at(self, t: float) -> bool:
        """Wait until ``t`` seconds after the start; False if the runner was stopped first."""
        return not self._stop.wait(max(0.0, self.started + t - time.monotonic()))

    def _run(self) -> None:
        try:
            for phase in self.plan.phases:
                if phase.name in ("before", "after"):
                    continue
                if not self._at(phase.start_s):
                    return
                begun = time.monotonic() - self.started
                if phase.name == "stall":
                    with self.cluster.stalled(FAULTY_BROKER):
                        self._at(phase.end_s)
                else:
                    bound = phase.seconds + 10
                    with self.cluster.limping(FAULTY_BROKER, duty=LIMP_DUTY, period_s=LIMP_PERIOD_S,
                                              max_duration_s=bound):
                        self._at(phase.end_s)
                self.marks.append((phase.name, round(begun, 2), round(time.monotonic() - self.started, 2)))
        except BaseException as err:  # reported by the demo; the context managers above resumed the broker
            self.error = err
