"""Random assignor scenarios for differential testing against the Java assignors (seeded, reproducible).

Covers what the issue lists: varied topics/partitions/RF, racks per broker (including brokers without a
rack and partitions on every rack), consumers with and without racks (and on racks no broker has), unequal
subscriptions, static members, and owned partitions with generations (including stale and conflicting
claims), so both sticky builders and every rack-awareness switch are exercised.
"""

from __future__ import annotations

import random

from mutepro.racks.assign.model import ClusterMetadata, Member, Scenario, TopicPartition

_RACKS = ("rack-a", "rack-b", "rack-c", "rack-d")
_TOPIC_NAMES = ("t1", "t2", "t3", "orders", "orders-eu", "payments", "t10", "Ünïcode")


def random_scenario(rng: random.Random) -> Scenario:
    """One random scenario; every choice comes from ``rng``."""
    num_brokers = rng.randint(1, 6)
    racked = rng.random() > 0.1
    num_racks = rng.randint(1, min(4, num_brokers)) if racked else 0
    broker_racks: dict[int, str | None] = {}
    for b in range(num_brokers):
        if not racked or rng.random() < 0.05:
            broker_racks[b + 1] = None
        else:
            broker_racks[b + 1] = _RACKS[b % num_racks] if rng.random() < 0.8 else rng.choice(_RACKS[:num_racks])
    brokers = list(broker_racks)

    topics: dict[str, tuple[tuple[int, ...], ...]] = {}
    for name in rng.sample(_TOPIC_NAMES, rng.randint(1, 4)):
        partitions = rng.randint(1, 12)
        rf = rng.randint(1, min(3, num_brokers))
        offset = rng.randrange(num_brokers)
        striped = rng.random() < 0.5
        replicas = []
        for p in range(partitions):
            if striped:
                replicas.append(tuple(brokers[(p + j + offset) % num_brokers] for j in range(rf)))
            else:
                replicas.append(tuple(rng.sample(brokers, rf)))
        topics[name] = tuple(replicas)

    topic_names = list(topics)
    num_members = rng.randint(1, 6)
    equal = rng.random() < 0.5
    consumer_rack_mode = rng.choice(("all", "some", "none", "alien"))
    previous = rng.random() < 0.6
    all_tps = [TopicPartition(t, p) for t, ps in topics.items() for p in range(len(ps))]
    members: list[Member] = []
    base_generation = rng.randint(1, 9)
    # a clean previous assignment (each partition had at most one owner) or independent, overlapping claims
    disjoint = rng.random() < 0.5
    previous_owner = {tp: rng.randrange(num_members + 1) for tp in all_tps}
    for i in range(num_members):
        member_id = rng.choice((f"consumer{i}", f"c{i}-{rng.randrange(10**6):06d}", f"m{rng.randrange(100)}x{i}"))
        if equal:
            subscribed = tuple(topic_names)
        else:
            subscribed = tuple(rng.sample(topic_names, rng.randint(1, len(topic_names))))
            if rng.random() < 0.05:
                subscribed += ("ghost-topic",)
        rack: str | None
        if consumer_rack_mode == "all" or (consumer_rack_mode == "some" and rng.random() < 0.6):
            rack = rng.choice(_RACKS[: max(1, num_racks)])
        elif consumer_rack_mode == "alien":
            rack = rng.choice(("rack-x", "rack-y", *_RACKS[: max(1, num_racks)]))
        else:
            rack = None
        owned: tuple[TopicPartition, ...] = ()
        generation: int | None = None
        if previous:
            if disjoint:
                owned = tuple(tp for tp in all_tps if previous_owner[tp] == i)
            else:
                owned = tuple(tp for tp in all_tps if rng.random() < 1.0 / num_members)
            if len(owned) > 1 and rng.random() < 0.3:
                owned = tuple(rng.sample(owned, len(owned)))
            roll = rng.random()
            generation = base_generation if roll < 0.7 else (base_generation - 1 if roll < 0.9 else None)
        instance = f"instance-{rng.randrange(100)}-{i}" if rng.random() < 0.3 else None
        members.append(Member(member_id, subscribed, rack, owned, generation, instance))
    # member ids drawn at random may collide; keep the first of each
    unique: dict[str, Member] = {}
    for m in members:
        unique.setdefault(m.member_id, m)
    return Scenario(tuple(unique.values()), ClusterMetadata(broker_racks, topics))
