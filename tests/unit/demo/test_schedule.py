"""When the demo's broker misbehaves (mutepro.demo.schedule): the plan of phases, and the runner carrying it out on
a stand-in cluster (run on the test's thread, every phase already due: nothing waits)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mutepro.demo.schedule import FAULTY_BROKER, LIMP_DUTY, LIMP_PERIOD_S, FaultRunner, plan_faults
from mutepro.errors import ConfigError


class TestPlan:
    def test_both_is_limp_then_stall_in_the_middle(self) -> None:
        """A quarter before, 45 % fault (limp then stall, half each), the rest after, covering the run."""
        plan = plan_faults(120, "both")
        assert [(p.name, p.start_s, p.end_s) for p in plan.phases] == [
            ("before", 0.0, 30.0), ("limp", 30.0, 57.0), ("stall", 57.0, 84.0), ("after", 84.0, 120.0),
        ]
        assert plan.window == (30.0, 84.0)
        assert (plan.phase_at(29.9), plan.phase_at(57.0), plan.phase_at(130)) == ("before", "stall", "after")

    @pytest.mark.parametrize(("duration", "fault"), [(5, "stall"), (120, "crash")])
    def test_bad_input_names_the_option(self, duration: float, fault: str) -> None:
        """A too-short run or an unknown fault is refused naming --duration / --fault."""
        with pytest.raises(ConfigError, match="--duration" if fault == "stall" else "--fault"):
            plan_faults(duration, fault)

    def test_as_dict_names_the_broker_and_the_limp(self) -> None:
        data = plan_faults(40, "limp").as_dict()
        assert data["broker"] == FAULTY_BROKER and data["limp"] == {"duty": LIMP_DUTY, "period_s": LIMP_PERIOD_S}
        assert [p["name"] for p in data["phases"]] == ["before", "limp", "after"]
        assert sum(p["end_s"] - p["start_s"] for p in data["phases"]) == 40


class _Cluster:
    """Records the faults it is asked for; ``fail`` makes the stall raise inside its context."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, int, dict[str, Any]]] = []
        self.resumed = 0
        self.fail = fail

    @contextlib.contextmanager
    def stalled(self, broker: int) -> Iterator[None]:
        self.calls.append(("stall", broker, {}))
        try:
            if self.fail:
                raise RuntimeError("SIGSTOP failed")
            yield
        finally:
            self.resumed += 1

    @contextlib.contextmanager
    def limping(self, broker: int, **kwargs: Any) -> Iterator[None]:
        self.calls.append(("limp", broker, kwargs))
        try:
            yield
        finally:
            self.resumed += 1


class TestFaultRunner:
    def test_each_fault_phase_is_carried_out_on_the_faulty_broker_and_marked(self) -> None:
        """Started 1000 s ago: every phase is due; limp (bounded by its length + 10 s) then stall, each resumed."""
        cluster = _Cluster()
        plan = plan_faults(120, "both")
        runner = FaultRunner(cluster, plan, started=time.monotonic() - 1000)
        runner._run()
        assert [(name, broker) for name, broker, _ in cluster.calls] == [("limp", FAULTY_BROKER),
                                                                          ("stall", FAULTY_BROKER)]
        assert cluster.calls[0][2] == {"duty": LIMP_DUTY, "period_s": LIMP_PERIOD_S, "max_duration_s": 27.0 + 10}
        assert cluster.resumed == 2 and runner.error is None
        assert [name for name, _, _ in runner.marks] == ["limp", "stall"]

    def test_stopped_before_a_phase_begins_nothing_is_done(self) -> None:
        cluster = _Cluster()
        runner = FaultRunner(cluster, plan_faults(40, "stall"), started=time.monotonic() + 1000)
        runner._stop.set()
        runner._run()
        assert cluster.calls == [] and runner.marks == [] and runner.error is None

    def test_a_failing_fault_is_kept_and_the_broker_resumed(self) -> None:
        cluster = _Cluster(fail=True)
        runner = FaultRunner(cluster, plan_faults(40, "stall"), started=time.monotonic() - 1000)
        runner._run()
        assert isinstance(runner.error, RuntimeError) and cluster.resumed == 1 and runner.marks == []

    def test_stop_ends_the_thread(self) -> None:
        """Started with every phase an hour away: stop() returns with the thread ended and nothing done."""
        cluster = _Cluster()
        runner = FaultRunner(cluster, plan_faults(40, "stall"), started=time.monotonic() + 3600).start()
        runner.stop()
        assert not runner._thread.is_alive() and cluster.calls == []
