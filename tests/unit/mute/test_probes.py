"""ProbeDesk, the half-open partitions' probe slots: which partitions wait for a probe, slots granted one per
spacing, given back when unsent, and a probe's answer judged against the topic's limit."""

from __future__ import annotations

import math

from tests.unit.mute._rig import LEADERS, POLICY, FakeClock, Rig, T, to_half_open


class TestProbeSpacing:
    def test_probes_are_granted_one_per_spacing(self, rig: Rig) -> None:
        """A second probe waits breaker.probe_spacing_ms (250) after the first, even with a slot free."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.clock.advance(0.2)
        assert not rig.mgr.probes.try_probe(T, 2)
        rig.clock.advance(0.05)
        assert rig.mgr.probes.try_probe(T, 2)

    def test_zero_spacing_grants_every_slot_at_once(self, clock: FakeClock) -> None:
        """probe_spacing_ms: 0 grants all half_open_probes at once (the former behaviour)."""
        policy = POLICY.model_copy(update={"breaker": POLICY.breaker.model_copy(update={"probe_spacing_ms": 0})})
        rig = Rig(clock, policy=policy)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        to_half_open(rig, 2)
        assert [rig.mgr.probes.try_probe(T, 2) for _ in range(3)] == [True, True, False]


class TestSlots:
    def test_only_half_open_partitions_are_probing(self, rig: Rig) -> None:
        assert rig.mgr.probes.probing(T) == frozenset()
        to_half_open(rig, 2)
        assert rig.mgr.probes.probing(T) == frozenset({2})
        assert rig.mgr.probes.probing("unknown") == frozenset()

    def test_an_unsent_probe_gives_its_slot_back(self, clock: FakeClock) -> None:
        """With spacing 0 and 2 slots: both taken, one given back, one granted again -- and no more."""
        policy = POLICY.model_copy(update={"breaker": POLICY.breaker.model_copy(update={"probe_spacing_ms": 0})})
        rig = Rig(clock, policy=policy)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        to_half_open(rig, 2)
        assert [rig.mgr.probes.try_probe(T, 2) for _ in range(2)] == [True, True]
        rig.mgr.probes.probe_unsent(T, 2)
        assert [rig.mgr.probes.try_probe(T, 2) for _ in range(2)] == [True, False]

    def test_unknown_partitions_have_no_slots(self, rig: Rig) -> None:
        assert not rig.mgr.probes.try_probe(T, 99)
        assert not rig.mgr.probes.try_probe("unknown", 0)
        assert rig.mgr.probes.probe_wait("unknown") == math.inf
        rig.mgr.probes.probe_unsent("unknown", 0)  # nothing to give back, and no error
        rig.mgr.probes.probe_result("unknown", 0, True)


class TestAnswers:
    def test_a_probe_slower_than_the_limit_fails_and_reopens(self, rig: Rig) -> None:
        """The policy's slow threshold is 1 s: a probe delivered in 1.5 s is no evidence of health; the breaker
        re-opens at once (no more probes until its backed-off retry interval)."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.mgr.probes.probe_result(T, 2, True, latency_s=1.5)
        rig.clock.advance(0.25)
        assert rig.mgr.is_muted(T, 2) and rig.state_of(2) == "open"
        assert not rig.mgr.probes.try_probe(T, 2)

    def test_probes_within_the_limit_unmute(self, rig: Rig) -> None:
        to_half_open(rig, 2)
        for _ in range(2):
            assert rig.mgr.probes.try_probe(T, 2)
            rig.mgr.probes.probe_result(T, 2, True, latency_s=0.01)
            rig.clock.advance(0.25)
        assert not rig.mgr.is_muted(T, 2)
