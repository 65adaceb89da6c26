"""The demo's fault schedule (mutepro.demo.schedule.plan_faults): phases covering the run, the fault in its middle
45 %, both faults splitting it, and bad arguments named."""

from __future__ import annotations

import pytest

from mutepro.demo.schedule import plan_faults
from mutepro.errors import ConfigError


class TestPlan:
    def test_one_fault_between_before_and_after(self) -> None:
        plan = plan_faults(60, "stall")
        assert [(p.name, p.start_s, p.end_s) for p in plan.phases] == [
            ("before", 0.0, 15.0), ("stall", 15.0, 42.0), ("after", 42.0, 60.0)
        ]
        assert plan.window == (15.0, 42.0) and plan.duration_s == 60.0

    def test_both_is_a_limp_then_a_stall(self) -> None:
        plan = plan_faults(60, "both")
        assert [p.name for p in plan.phases] == ["before", "limp", "stall", "after"]
        assert plan.phases[1].end_s == plan.phases[2].start_s == 28.5 and plan.window == (15.0, 42.0)

    def test_phase_at_any_time(self) -> None:
        plan = plan_faults(20, "limp")
        assert [plan.phase_at(t) for t in (0.0, 5.0, 13.99, 14.0, 25.0)] == ["before", "limp", "limp", "after",
                                                                              "after"]  # fmt: skip
        assert plan.phases[1].seconds == pytest.approx(9.0)

    def test_as_dict_names_the_broker_and_the_limp(self) -> None:
        d = plan_faults(20, "limp").as_dict()
        assert d["fault"] == "limp" and d["limp"] == {"duty": 0.8, "period_s": 3.0} and len(d["phases"]) == 3


class TestBadArguments:
    def test_an_unknown_fault_names_the_choices(self) -> None:
        with pytest.raises(ConfigError, match=r"--fault: expected one of .*stall.*got 'crash'"):
            plan_faults(60, "crash")

    @pytest.mark.parametrize("seconds", [19, 1801])
    def test_a_duration_outside_its_range(self, seconds: float) -> None:
        with pytest.raises(ConfigError, match="--duration: expected 20 to 1800 seconds"):
            plan_faults(seconds, "stall")
