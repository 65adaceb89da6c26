"""The snapshots a manager publishes as topics appear, grow and are re-weighted (mutepro.mute.publisher)."""

from __future__ import annotations

import pytest

from tests.unit.mute._rig import LEADERS, POLICY, FakeClock, Rig, T


class TestEnsureTopic:
    def test_unknown_topic(self, clock: FakeClock) -> None:
        """Before ensure_topic a topic has no snapshot, nothing muted and nothing probing."""
        mgr = Rig(clock).mgr
        assert mgr.snapshot(T) is None
        assert (mgr.is_muted(T, 0), mgr.probes.probing(T), mgr.muted_partitions(), mgr.known_topics()) == (
            False, frozenset(), {}, []
        )
        assert mgr.leader(T, 0) == -1

    def test_first_snapshot_all_writable(self, rig: Rig) -> None:
        """ensure_topic publishes a snapshot with every partition writable and records the leaders."""
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert (snap.topic, snap.partition_count, snap.writable, snap.muted) == (T, 6, (0, 1, 2, 3, 4, 5), frozenset())
        assert [rig.mgr.leader(T, p) for p in range(6)] == [1, 2, 3, 1, 2, 2]
        assert rig.mgr.known_topics() == [T]
        assert rig.mgr.policy(T) is POLICY
        assert rig.events == []

    def test_ensure_again_keeps_snapshot(self, rig: Rig) -> None:
        """Calling ensure_topic again with the same metadata publishes no new snapshot."""
        before = rig.mgr.snapshot(T)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        assert rig.mgr.snapshot(T) is before

    def test_partitions_added(self, rig: Rig) -> None:
        """A topic that grew gets a snapshot covering the new partitions."""
        rig.mgr.rounds.ensure_topic(T, 8, {**LEADERS, 6: 3, 7: 1})
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert (snap.partition_count, snap.writable) == (8, tuple(range(8)))
        assert rig.mgr.leader(T, 7) == 1

    def test_refresh_weights(self, rig: Rig) -> None:
        """refresh_weights publishes KIP-794 weights from the queue sizes (emptier partitions weigh more)."""
        rig.mgr.rounds.refresh_weights(T, {0: 3, 1: 0})
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        probs = snap.probabilities()
        assert probs[1] > probs[0]
        assert probs[1] == pytest.approx(probs[2])

    def test_a_weight_refresh_keeps_the_reroute_memo_and_a_mute_empties_it(self, rig: Rig) -> None:
        """The memo survives new weights (same writable partitions) but not a mute, which changes the fallbacks."""
        rig.mgr.mute(T, 1)
        muted = rig.mgr.snapshot(T)
        assert muted is not None
        muted.reroute_memo[b"k"] = 2
        rig.mgr.rounds.refresh_weights(T, {0: 3, 2: 0})
        refreshed = rig.mgr.snapshot(T)
        assert refreshed is not None and refreshed is not muted and refreshed.reroute_memo == {b"k": 2}
        rig.mgr.mute(T, 2)
        again = rig.mgr.snapshot(T)
        assert again is not None and again.reroute_memo == {}
