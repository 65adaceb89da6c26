"""Differential test: the striped placer and the server-side assignors against Kafka 4.3.1's own classes.

One JVM runs every case (placement and group): ~1,200 seeded placements and ~1,200 random groups per
assignor. Layouts include uneven racks, brokers without rack, fenced brokers, RF up to the broker count,
and topics grown by a second ``place()`` on the same placer; groups are homogeneous and heterogeneous,
with and without a current assignment, with static members.
"""

from __future__ import annotations

import random

import pytest
from javaharness.kraft import KraftOutcome, PlacementStep, controller_case, group_case, placement_case, run_kraft

from mutepro.racks.assign import server
from mutepro.racks.assign.server import GroupMember, GroupState, GroupTopic, JavaUuid, server_assign
from mutepro.racks.javarandom import JavaRandom
from mutepro.racks.placement import PlacementError
from mutepro.racks.striped import StripedReplicaPlacer, UsableBroker, controller_broker_order, striped_placement

pytestmark = pytest.mark.integration

SEED = 848
NUM_PLACEMENTS = 1200
NUM_GROUPS = 1200
NUM_ORDER_GROUPS = 1000
NUM_CONTROLLER = 600


def random_layout(rng: random.Random) -> list[UsableBroker]:
    """1-14 brokers over 1-5 racks of uneven size; sometimes brokers without rack, sometimes fenced ones."""
    n = rng.randint(1, 14)
    racks = [f"rack-{c}" for c in "abcde"[: rng.randint(1, 5)]]
    ids = rng.sample(range(0, 40), n)
    weights = [rng.random() + 0.1 for _ in racks]
    no_rack = rng.random() < 0.15
    fence_p = rng.choice([0.0, 0.0, 0.2, 0.5])
    brokers = []
    for b in ids:
        rack = None if no_rack and rng.random() < 0.3 else rng.choices(racks, weights)[0]
        brokers.append(UsableBroker(b, rack, rng.random() < fence_p))
    return brokers


def random_steps(rng: random.Random) -> list[PlacementStep]:
    brokers = random_layout(rng)
    rf = rng.randint(1, len(brokers))
    first = PlacementStep(tuple(brokers), rng.randint(1, 30), rf)
    if rng.random() < 0.4:
        # grow the topic: same placer (same Random), possibly one more broker fenced meanwhile
        grown = list(brokers)
        if rng.random() < 0.5:
            i = rng.randrange(len(grown))
            grown[i] = UsableBroker(grown[i].id, grown[i].rack, True)
        return [first, PlacementStep(tuple(grown), rng.randint(1, 10), rf, first.partitions)]
    return [first]


def port_placements(seed: int, steps: list[PlacementStep]) -> list[list[list[int]]] | str:
    placer = StripedReplicaPlacer(JavaRandom(seed))
    result = []
    try:
        for s in steps:
            placed = placer.place(s.partitions, s.rf, s.brokers, start_partition=s.start)
            result.append([placed[p] for p in sorted(placed)])
    except PlacementError as err:
        return str(err)
    return result


def random_group(rng: random.Random) -> GroupState:
    """1-8 members, 1-5 topics; homogeneous or not; a current assignment in a third of groups; either trigger."""
    topics = {}
    for i in range(rng.randint(1, 5)):
        name = f"t{i}" if rng.random() < 0.7 else f"topic-{rng.randrange(1000)}"
        tid = JavaUuid(rng.randrange(-(2**63), 2**63), rng.randrange(-(2**63), 2**63))
        topics[name] = GroupTopic(name, tid, rng.randint(1, 40))
    names = list(topics)
    n_members = rng.randint(1, 8)
    homogeneous = rng.random() < 0.5
    shared = rng.sample(names, rng.randint(1, len(names)))
    members = []
    used_ids: set[str] = set()
    for _ in range(n_members):
        # short readable ids, or ids shaped like the 22-character base64 ones clients generate
        random_id = "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789_-", k=22))
        member_id = rng.choice([f"consumer-{rng.randrange(100)}", random_id])
        if member_id in used_ids:
            continue
        used_ids.add(member_id)
        subscribed = shared if homogeneous else rng.sample(names, rng.randint(1, len(names)))
        instance = f"instance-{rng.randrange(50)}" if rng.random() < 0.2 else None
        members.append(GroupMember(member_id, tuple(subscribed), instance, rng.choice(["a", "b", "c", None])))
    if rng.random() < 1 / 3:
        # a current target assignment: every partition to at most one member, some to members no longer subscribed
        owned: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in members}
        for name, topic in topics.items():
            for p in range(topic.partitions):
                if rng.random() < 0.7:
                    owner = rng.choice(members)
                    owned[owner.member_id].setdefault(name, []).append(p)
        members = [
            GroupMember(
                m.member_id, m.topics, m.instance_id, m.rack,
                tuple((t, tuple(rng.sample(ps, len(ps)))) for t, ps in owned[m.member_id].items()),
            )
            for m in members
        ]  # fmt: skip
    # the coordinator computed on the last member's join, or on a later heartbeat (assignment interval)
    return GroupState(tuple(members), topics, joined_last=rng.random() < 0.5)


def shuffled_subscription_group(rng: random.Random) -> GroupState:
    """2-6 members all subscribing to the same 10 topics, each listing them in its own random order.

    Two of ten names share a HashSet bucket in most groups, so whether a member's names were sorted (in the
    group) or kept as sent (the joiner) decides the walk in some of them; either trigger, sometimes a current
    assignment.
    """
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
    topics: dict[str, GroupTopic] = {}
    while len(topics) < 10:
        name = "".join(rng.choices(alphabet, k=rng.randint(2, 12)))
        tid = JavaUuid(rng.randrange(-(2**63), 2**63), rng.randrange(-(2**63), 2**63))
        topics[name] = GroupTopic(name, tid, rng.randint(1, 4))
    names = list(topics)
    members = []
    for _ in range(rng.randint(2, 6)):
        member_id = "".join(rng.choices(alphabet[:-3] + "_-", k=22))
        members.append(GroupMember(member_id, tuple(rng.sample(names, len(names)))))
    if rng.random() < 0.3:
        owned: dict[str, list[tuple[str, int]]] = {m.member_id: [] for m in members}
        for name, topic in topics.items():
            for p in range(topic.partitions):
                if rng.random() < 0.6:
                    owned[rng.choice(members).member_id].append((name, p))
        members = [
            GroupMember(m.member_id, m.topics, assignment=tuple(
                (t, tuple(p for n, p in owned[m.member_id] if n == t))
                for t in dict.fromkeys(n for n, _ in owned[m.member_id])
            ))
            for m in members
        ]  # fmt: skip
    return GroupState(tuple(members), topics, joined_last=rng.random() < 0.5)


def random_controller_case(rng: random.Random) -> tuple[int, list[UsableBroker], int, int]:
    """Up to 24 brokers with ids up to 3000 (so buckets are not in id order), registered in a random order.

    Ids are drawn near multiples of 16 and 32 in a third of the layouts, so some share a bucket and their
    registration order shows. Two thirds use racks rack1..rack10, where "rack6" and "rack10" share a bucket of
    the placer's rack HashMap: which of the two draws its random offset first follows the broker order.
    """
    n = rng.randint(1, 24)
    if rng.random() < 1 / 3:
        pool = sorted({k * rng.choice([16, 32]) + rng.randint(0, 2) for k in range(1, 90)})
    else:
        pool = list(range(0, 3000))
    ids = rng.sample(pool, min(n, len(pool)))
    count = 10 if rng.random() < 2 / 3 else rng.randint(1, 5)
    racks = [f"rack{i}" for i in range(1, count + 1)]
    brokers = [UsableBroker(b, rng.choice(racks), rng.random() < 0.1) for b in ids]
    if all(b.fenced for b in brokers):
        brokers[0] = UsableBroker(brokers[0].id, brokers[0].rack, False)
    return rng.randrange(-(2**63), 2**63), brokers, rng.randint(1, 20), rng.randint(1, len(brokers))


def port_controller(seed: int, brokers: list[UsableBroker], partitions: int, rf: int, *, sort: bool = False):  # type: ignore[no-untyped-def]
    """What ``racks placement`` computes: brokers in the controller's order (or sorted, the old CLI)."""
    by_id = {b.id: b for b in brokers}
    order = sorted(by_id) if sort else controller_broker_order(by_id)
    try:
        placed = striped_placement([by_id[b] for b in order], partitions, rf, seed=seed)
    except PlacementError as err:
        return str(err)
    return [[placed[p] for p in sorted(placed)]]


def port_assignment(assignor: str, group: GroupState) -> dict[str, dict[str, set[int]]]:
    return {m: {t: ps for t, ps in topics.items() if ps} for m, topics in server_assign(group, assignor).items()}


@pytest.fixture(scope="module")
def cases() -> tuple[list[tuple[int, list[PlacementStep]]], list[GroupState]]:
    rng = random.Random(SEED)
    placements = [(rng.randrange(-(2**63), 2**63), random_steps(rng)) for _ in range(NUM_PLACEMENTS)]
    groups = [random_group(rng) for _ in range(NUM_GROUPS)]
    return placements, groups


@pytest.fixture(scope="module")
def order_groups() -> list[GroupState]:
    rng = random.Random(SEED + 1)
    return [shuffled_subscription_group(rng) for _ in range(NUM_ORDER_GROUPS)]


@pytest.fixture(scope="module")
def controller_cases() -> list[tuple[int, list[UsableBroker], int, int]]:
    rng = random.Random(SEED + 2)
    return [random_controller_case(rng) for _ in range(NUM_CONTROLLER)]


@pytest.fixture(scope="module")
def java(cases, order_groups, controller_cases) -> dict[str, KraftOutcome]:  # type: ignore[no-untyped-def]
    placements, groups = cases
    batch = [placement_case(f"p{i}", seed, steps) for i, (seed, steps) in enumerate(placements)]
    for assignor in ("uniform", "range"):
        batch += [group_case(f"{assignor}{i}", assignor, g) for i, g in enumerate(groups)]
    batch += [group_case(f"order{i}", "uniform", g) for i, g in enumerate(order_groups)]
    batch += [controller_case(f"c{i}", *case) for i, case in enumerate(controller_cases)]
    return run_kraft(batch)


def _java_groups(assignment: dict[str, dict[str, set[int]]]) -> dict[str, dict[str, set[int]]]:
    return {m: {t: ps for t, ps in topics.items() if ps} for m, topics in assignment.items()}


class TestStripedVsJava:
    def test_identical_on_every_seeded_layout(self, cases, java):  # type: ignore[no-untyped-def]
        """Same seed, same brokers: the port's replica lists equal StripedReplicaPlacer's, errors included."""
        placements, _ = cases
        differing, errors_both = [], 0
        for i, (seed, steps) in enumerate(placements):
            outcome = java[f"p{i}"]
            mine = port_placements(seed, steps)
            if outcome.error is not None:
                errors_both += isinstance(mine, str)
                if not isinstance(mine, str):
                    differing.append((i, "only Java failed", outcome.error))
                continue
            if mine != outcome.placements:
                differing.append((i, mine, outcome.placements))
        assert differing == []
        assert len(placements) >= 1000
        grown = sum(len(steps) > 1 for _, steps in placements)
        fenced = sum(any(b.fenced for b in steps[0].brokers) for _, steps in placements)
        print(f"striped: {len(placements)} layouts identical ({grown} grown, {fenced} with fenced, "
              f"{errors_both} rejected by both)")  # fmt: skip
        assert grown > 100 and fenced > 100


class TestServerAssignorsVsJava:
    @pytest.mark.parametrize("assignor", ["uniform", "range"])
    def test_identical_on_every_group(self, assignor, cases, java):  # type: ignore[no-untyped-def]
        """Same group, same current assignment: the port's assignment equals the coordinator assignor's."""
        _, groups = cases
        differing = []
        for i, group in enumerate(groups):
            outcome = java[f"{assignor}{i}"]
            assert outcome.error is None, f"Java {assignor} failed on group {i}: {outcome.error}"
            assert outcome.assignment is not None
            if port_assignment(assignor, group) != _java_groups(outcome.assignment):
                differing.append(i)
        assert differing == []
        homogeneous = sum(g.homogeneous() for g in groups)
        with_current = sum(any(m.assignment for m in g.members) for g in groups)
        print(f"{assignor}: {len(groups)} groups identical ({homogeneous} homogeneous, {with_current} with a "
              "current assignment)")  # fmt: skip
        assert len(groups) >= 1000 and 300 < homogeneous < len(groups) - 300 and with_current > 200


class TestSubscriptionOrderVsJava:
    def test_members_in_the_group_sorted_joiner_as_sent(self, order_groups, java, monkeypatch):  # type: ignore[no-untyped-def]
        """10 topics listed in random order: identical to the coordinator's path (record helper + updateWith)."""
        differing = []
        for i, group in enumerate(order_groups):
            outcome = java[f"order{i}"]
            assert outcome.error is None, f"Java uniform failed on group {i}: {outcome.error}"
            assert outcome.assignment is not None
            if port_assignment("uniform", group) != _java_groups(outcome.assignment):
                differing.append(i)
        assert differing == []
        # the same groups with every member's list taken as given (mutepro before the fix): how many the
        # differential would catch
        monkeypatch.setattr(server, "coordinator_subscription", lambda member, joining: list(member.topics))
        as_listed = sum(
            port_assignment("uniform", g) != _java_groups(java[f"order{i}"].assignment or {})
            for i, g in enumerate(order_groups)
        )
        joined = sum(g.joined_last for g in order_groups)
        print(f"subscription order: {len(order_groups)} groups identical ({joined} with a joiner); "
              f"{as_listed} would differ with every member's names as listed")  # fmt: skip
        assert as_listed >= 20


class TestControllerOrderVsJava:
    def test_placer_gets_the_heartbeat_managers_order(self, controller_cases, java):  # type: ignore[no-untyped-def]
        """Brokers registered in a real BrokerHeartbeatManager: the port in controller order equals Java."""
        differing, errors_both, sorted_differs = [], 0, 0
        for i, case in enumerate(controller_cases):
            outcome = java[f"c{i}"]
            mine = port_controller(*case)
            if outcome.error is not None:
                errors_both += isinstance(mine, str)
                if not isinstance(mine, str):
                    differing.append((i, "only Java failed", outcome.error))
                continue
            if mine != outcome.placements:
                differing.append((i, mine, outcome.placements))
            sorted_differs += port_controller(*case, sort=True) != outcome.placements
        assert differing == []
        print(f"controller order: {len(controller_cases)} layouts identical ({errors_both} rejected by both); "
              f"{sorted_differs} would differ with brokers sorted by id")  # fmt: skip
        assert sorted_differs >= 20
