"""Which brokers delivered while a message waited (mutepro.mute.answered): the evidence of the served-elsewhere
judgement and of the Spark sink's flush hedge."""

from __future__ import annotations

from mutepro.mute.answered import answered_meanwhile, drained_by_leader, drained_since, last_delivery_by_leader
from tests.unit.mute._rules import topic


def test_the_last_delivery_per_leader() -> None:
    """Partitions 0 and 3 (broker 1) delivered at 5.0 and 7.0, partition 1 (broker 2) at 6.0; broker 3 never."""
    t = topic()
    t.partitions[0].delivered_at, t.partitions[3].delivered_at, t.partitions[1].delivered_at = 5.0, 7.0, 6.0
    t.partitions[2].delivered_at, t.partitions[2].leader = 9.0, -1  # leaderless: no broker to credit
    assert last_delivery_by_leader(t) == {1: 7.0, 2: 6.0}


def test_answered_meanwhile_excludes_the_brokers_asked_about_and_is_strict() -> None:
    t = topic()
    t.partitions[0].delivered_at, t.partitions[1].delivered_at = 7.0, 6.0
    assert answered_meanwhile(t, {2}, 6.5)  # broker 1 at 7.0
    assert not answered_meanwhile(t, {1}, 6.5)  # broker 2's 6.0 came before
    assert not answered_meanwhile(t, {2}, 7.0)  # strictly after
    assert not answered_meanwhile(t, {1, 2}, 0.0)


def test_drained_partitions_per_leader() -> None:
    """Partitions 0 and 3 (broker 1) written at 5.0 and 7.0 and holding nothing, partition 1 (broker 2) written at
    6.0 but still holding a message: broker 1 drained what it was sent up to 7.0; at or after 7.0 counts."""
    t = topic()
    t.partitions[0].active_at, t.partitions[3].active_at, t.partitions[1].active_at = 5.0, 7.0, 6.0
    drained = drained_by_leader(t, [0, 1, 3], {0: 0.0, 1: 0.4, 3: 0.0})
    assert drained == {1: 7.0}
    assert drained_since(drained, 7.0, (2,)) and not drained_since(drained, 7.01, (2,))
    assert not drained_since(drained, 5.0, (1,))
