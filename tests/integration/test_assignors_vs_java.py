"""Differential test: the Python ports against the real kafka-clients assignors on 1,000+ random scenarios."""

from __future__ import annotations

import random

import pytest
from _assign_random import random_scenario
from javaharness.harness import JavaCase, JavaOutcome, run_java

from mutepro.racks.assign.figures import compute_figures
from mutepro.racks.assign.model import Assignment, AssignmentStateError, Scenario
from mutepro.racks.assign.range import RangeAssignor
from mutepro.racks.assign.sticky import CooperativeStickyAssignor

pytestmark = pytest.mark.integration

SEED = 881
NUM_SCENARIOS = 1200


def _as_sets(assignment: Assignment) -> dict[str, set[object]]:
    return {m: set(ps) for m, ps in assignment.items()}


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    rng = random.Random(SEED)
    return [random_scenario(rng) for _ in range(NUM_SCENARIOS)]


@pytest.fixture(scope="module")
def java_outcomes(scenarios: list[Scenario]) -> dict[str, JavaOutcome]:
    # one JVM for every case of both assignors: ~10 s instead of minutes
    cases = [JavaCase(f"range-{i}", "range", s) for i, s in enumerate(scenarios)]
    cases += [JavaCase(f"sticky-{i}", "cooperative-sticky", s) for i, s in enumerate(scenarios)]
    return run_java(cases)


class TestRangeVsJava:
    def test_identical_on_every_scenario(self, scenarios: list[Scenario], java_outcomes: dict[str, JavaOutcome]):
        """RangeAssignor port gives exactly Java's assignment on every random scenario."""
        differing = []
        for i, scenario in enumerate(scenarios):
            java = java_outcomes[f"range-{i}"]
            assert java.error is None, f"Java range failed on scenario {i}: {java.error}"
            assert java.assignment is not None
            mine = RangeAssignor().assign(scenario)
            if _as_sets(mine) != _as_sets(java.assignment):
                differing.append(i)
        assert differing == []
        assert len(scenarios) >= 1000


class TestCooperativeStickyVsJava:
    def test_identical_or_better(self, scenarios: list[Scenario], java_outcomes: dict[str, JavaOutcome]):
        """Sticky port is identical to Java's or not worse on balance, rack mismatches and moves."""
        identical = not_worse = both_failed = 0
        worse: list[int] = []
        for i, scenario in enumerate(scenarios):
            java = java_outcomes[f"sticky-{i}"]
            try:
                mine = CooperativeStickyAssignor().assign(scenario)
            except AssignmentStateError:
                # Java rejects the same inconsistent input (an NPE/IllegalStateException there)
                assert java.error is not None, f"scenario {i}: only the port failed"
                both_failed += 1
                continue
            assert java.error is None, f"scenario {i}: only Java failed: {java.error}"
            assert java.assignment is not None
            if _as_sets(mine) == _as_sets(java.assignment):
                identical += 1
            elif compute_figures(scenario, mine).not_worse_than(compute_figures(scenario, java.assignment)):
                not_worse += 1
            else:
                worse.append(i)
        print(
            f"cooperative-sticky: {identical} identical, {not_worse} different but not worse, "
            f"{both_failed} rejected by both, of {len(scenarios)}"
        )
        assert worse == []
        assert identical + not_worse + both_failed == len(scenarios)
        assert identical >= 0.99 * len(scenarios)
