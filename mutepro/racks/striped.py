"""KRaft's replica placement, ported from Kafka 4.3.1's ``org.apache.kafka.metadata.placement.StripedReplicaPlacer``.

A KRaft controller places the replicas of every new topic (and of partitions added to a topic) with this
placer; ``AdminUtils.assignReplicasToBrokers`` (KIP-36, :mod:`mutepro.racks.placement`) is what ZooKeeper-era
clusters did and is gone from the 4.x jars. Same inputs and the same seeded ``java.util.Random``
(:class:`~mutepro.racks.javarandom.JavaRandom`) give the same replica lists as Java.

How it places (racks a, b, c with brokers a0..a2, b0..b2, c0..c2, every random offset 0)::

    partition 0: a0, b0, c0      racks round-robin from a rotating start rack,
    partition 1: b1, c1, a1      brokers round-robin inside each rack,
    partition 2: c2, a2, b2      hence the "striped" pattern

- Each rack keeps its brokers in two sorted lists, unfenced and fenced, each with a random start offset;
  the racks are sorted (a broker without rack forms its own rack, sorted first) with a random start offset.
- The leader is the next *unfenced* broker of the first rack (from the rotating offset) that has one left
  in this round; followers walk the racks from the same offset, skipping the leader's rack once, taking
  unfenced brokers before fenced ones.
- After as many partitions as there are unfenced brokers, the rack list and every broker list are
  shuffled, so a big topic does not repeat the same replica sets.

Which numbers are drawn, and in which order, matters for the seeded result: one ``nextInt(size)`` per
non-empty broker list (fenced then unfenced, racks in ``HashMap`` order), then one for the rack offset;
shuffles draw ``Collections.shuffle``'s numbers (rack names first, then each rack's lists).

The controller seeds its placer with ``new Random()`` once at start-up and reuses it for every topic, so the
seed of a live cluster cannot be observed: a prediction is exact only for a seed you choose (the tests check
the port against the real class; on a live cluster they check that the cluster's placement is one the
port can produce and that its guarantees hold).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mutepro.racks.assign.javacompat import JavaHashSet, string_hash, string_key
from mutepro.racks.javarandom import JavaRandom, java_shuffle
from mutepro.racks.placement import Assignment, PlacementError

#: The Kafka version whose placer this module follows, word for word in behaviour.
KAFKA_VERSION = "4.3.1"


@dataclass(frozen=True)
class UsableBroker:
    """A broker the controller may place on: id, rack (``None`` without ``broker.rack``), fenced or not.

    Brokers in controlled shutdown (or with every log directory cordoned) are not usable: leave them out.
    """

    id: int
    rack: str | None = None
    fenced: bool = False


def as_usable_brokers(
    brokers: Mapping[int, str | None] | Iterable[UsableBroker], fenced: Iterable[int] = ()
) -> list[UsableBroker]:
    """``{id: rack}`` (plus the ids in ``fenced``) or :class:`UsableBroker` objects, in the given order."""
    fenced_ids = set(fenced)
    if isinstance(brokers, Mapping):
        return [UsableBroker(int(b), r or None, int(b) in fenced_ids) for b, r in brokers.items()]
    return [UsableBroker(b.id, b.rack, b.fenced or b.id in fenced_ids) for b in brokers]


class _BrokerList:
    """One rack's unfenced (or fenced) brokers, iterated round-robin from an offset that moves every round."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: JavaRandom) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.next_int(len(self.brokers))

    def shuffle(self, rng: JavaRandom) -> None:
        java_shuffle(self.brokers, rng)

    def next(self, epoch: int) -> int:
        """The next broker of round ``epoch``, or -1 when this list has given all of its brokers this round."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            # a new round starts one further along, so consecutive rounds do not begin on the same broker
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def initialize(self, rng: JavaRandom) -> None:
        self.fenced.initialize(rng)
        self.unfenced.initialize(rng)

    def shuffle(self, rng: JavaRandom) -> None:
        self.fenced.shuffle(rng)
        self.unfenced.shuffle(rng)

    def next(self, epoch: int) -> int:
        """Unfenced brokers first; fenced ones only once this rack's unfenced ones are used up this round."""
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


def _rack_hash(rack: str | None) -> int:
    # Optional.hashCode(): 0 when empty, else the value's hashCode
    return 0 if rack is None else string_hash(rack)


def _rack_sort_key(rack: str | None) -> tuple[int, bytes]:
    # OptionalStringComparator: empty first, then String.compareTo
    return (0, b"") if rack is None else (1, string_key(rack))


def _check_replication_factor(replication_factor: int, total: int, unfenced: int) -> None:
    if replication_factor <= 0:
        raise PlacementError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive. "
            "Pass replication_factor >= 1."
        )
    if unfenced == 0:
        raise PlacementError(
            "All brokers are currently fenced, or have all their log directories cordoned. Unfence a broker "
            "(start it, or let it catch up) before creating topics."
        )
    if replication_factor > total:
        raise PlacementError(
            f"The target replication factor of {replication_factor} cannot be reached because only {total} "
            "broker(s) are registered or some brokers have all their log directories cordoned. Lower "
            "replication_factor or add brokers."
        )


class _RackList:
    """All racks, iterated round-robin from an offset that advances by one per partition."""

    def __init__(self, rng: JavaRandom, brokers: Iterable[UsableBroker]) -> None:
        self.rng = rng
        self.racks: dict[str | None, _Rack] = {}
        # the racks map is a java.util.HashMap: initialize() and shuffle() visit racks in its order,
        # and that order decides which random number each rack draws
        self.rack_order: JavaHashSet[str | None] = JavaHashSet(_rack_hash)
        self.total = 0
        self.unfenced = 0
        for broker in brokers:
            rack = self.racks.get(broker.rack)
            if rack is None:
                rack = self.racks[broker.rack] = _Rack()
                self.rack_order.add(broker.rack)
            if broker.fenced:
                rack.fenced.brokers.append(broker.id)
            else:
                self.unfenced += 1
                rack.unfenced.brokers.append(broker.id)
            self.total += 1
        for name in self.rack_order:
            self.racks[name].initialize(rng)
        self.rack_names: list[str | None] = sorted(self.racks, key=_rack_sort_key)
        self.epoch = 0
        self.offset = rng.next_int(len(self.rack_names)) if self.rack_names else 0

    def shuffle(self) -> None:
        java_shuffle(self.rack_names, self.rng)
        for name in self.rack_order:
            self.racks[name].shuffle(self.rng)

    def place(self, replication_factor: int) -> list[int]:
        _check_replication_factor(replication_factor, self.total, self.unfenced)
        # After one partition per unfenced broker, reshuffle so later partitions do not repeat the same
        # replica sets (never with a single unfenced broker: the round would never end).
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        n = len(self.rack_names)
        replicas: list[int] = []
        first_rack = self.offset
        while True:
            broker = self.racks[self.rack_names[first_rack]].unfenced.next(self.epoch)
            if broker >= 0:
                replicas.append(broker)
                break
            first_rack = (first_rack + 1) % n
        rack_index = self.offset
        for _ in range(1, replication_factor):
            broker = -1
            while broker < 0:
                if rack_index == first_rack:
                    first_rack = -1  # the leader's rack is passed over once, then it is fair game
                else:
                    broker = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % n
            replicas.append(broker)
        self.epoch += 1
        self.offset += 1
        return replicas


def _integer_hash(broker_id: int) -> int:
    # Integer.hashCode() is the value itself
    return broker_id


def controller_broker_order(broker_ids: Iterable[int]) -> list[int]:
    """The order in which a KRaft controller hands its brokers to the placer, for ids registered in this order.

    Kafka 4.3.1's ``ReplicationControlManager.KRaftClusterDescriber.usableBrokers`` asks
    ``ClusterControlManager.usableBrokers``, which walks ``BrokerHeartbeatManager.brokers``, a
    ``java.util.HashMap<Integer, BrokerHeartbeatState>`` (``brokers.values().iterator()``, skipping brokers in
    controlled shutdown). A HashMap iterates bucket by bucket, bucket ``spread(id) & (table size - 1)`` with
    ``spread(h) = h ^ (h >>> 16)``; the table starts at 16 buckets and doubles past 0.75 load (a 13th broker
    makes it 32). So ids below the table size come out ascending, larger ones by their low bits.

    Worked example: 1014, 1042 and 1140 in a 16-bucket table land in buckets 6, 2 and 4 (1014 = 63 * 16 + 6),
    so the placer sees ``[1042, 1140, 1014]``, not ``[1014, 1042, 1140]``. Ids sharing a bucket (e.g. 1 and 17
    with at most 12 brokers) keep registration order: ``activate()`` fills the map from the broker
    registrations and a re-registering broker is removed and put back at the end. That history is not
    observable from outside, so ``broker_ids``' order stands for it (see :func:`registration_order_matters`).
    """
    return list(JavaHashSet(_integer_hash, broker_ids))


def registration_order_matters(broker_ids: Iterable[int]) -> list[tuple[int, ...]]:
    """Groups of ids sharing a bucket of the controller's broker ``HashMap``: their order is registration order.

    ``[1, 17, 2]`` gives ``[(1, 17)]`` (buckets 1, 1, 2 of 16); ``[1014, 1042, 1140]`` gives ``[]``.
    """
    ids = list(dict.fromkeys(broker_ids))
    table = JavaHashSet(_integer_hash, ids)
    buckets: dict[int, list[int]] = {}
    for broker in ids:
        buckets.setdefault(table.bucket_of(broker), []).append(broker)
    return [tuple(group) for group in buckets.values() if len(group) > 1]


class StripedReplicaPlacer:
    """The placer, holding its random generator across calls as the controller does.

    ``placer.place(3, 2, brokers)`` then ``placer.place(2, 2, brokers, start_partition=3)`` is a topic
    created with 3 partitions and grown to 5, drawing from one generator like a controller would.
    """

    def __init__(self, rng: JavaRandom) -> None:
        self.rng = rng

    def place(
        self,
        n_partitions: int,
        replication_factor: int,
        brokers: Mapping[int, str | None] | Iterable[UsableBroker],
        *,
        start_partition: int = 0,
    ) -> Assignment:
        """Partition id -> replicas (leader first) for ``n_partitions`` partitions from ``start_partition``."""
        if n_partitions < 0:
            raise PlacementError(f"Number of partitions must not be negative (n_partitions={n_partitions}).")
        rack_list = _RackList(self.rng, as_usable_brokers(brokers))
        _check_replication_factor(replication_factor, rack_list.total, rack_list.unfenced)
        return {start_partition + p: rack_list.place(replication_factor) for p in range(n_partitions)}


def striped_placement(
    brokers: Mapping[int, str | None] | Iterable[UsableBroker],
    n_partitions: int,
    replication_factor: int,
    *,
    seed: int,
    fenced: Iterable[int] = (),
    start_partition: int = 0,
) -> Assignment:
    """Where a KRaft controller whose placer was seeded with ``seed`` puts a new topic's replicas."""
    placer = StripedReplicaPlacer(JavaRandom(seed))
    return placer.place(
        n_partitions, replication_factor, as_usable_brokers(brokers, fenced), start_partition=start_partition
    )


def reachable_placements(
    brokers: Mapping[int, str | None] | Iterable[UsableBroker],
    n_partitions: int,
    replication_factor: int,
    seeds: Iterable[int],
) -> set[tuple[tuple[int, ...], ...]]:
    """Every distinct placement the seeds in ``seeds`` give: what a cluster with an unknown seed may do."""
    usable = as_usable_brokers(brokers)
    return {
        tuple(tuple(r) for _, r in sorted(striped_placement(usable, n_partitions, replication_factor, seed=s).items()))
        for s in seeds
    }
