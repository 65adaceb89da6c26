"""Creating a topic with an explicit rack-aware assignment (mutepro.racks.topics), on a stand-in admin client:
the live brokers' racks read, missing topics found, the replica assignment handed to CreateTopics as computed,
and each failure of the cluster a ClusterError naming it (against a real cluster:
tests/integration/test_racks_live.py)."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from mutepro.errors import ClusterError
from mutepro.racks.placement import PlacementError
from mutepro.racks.topics import cluster_racks, create_rack_aware_topic, missing_topics


def _done(value: Any = None, error: BaseException | None = None) -> Future[Any]:
    future: Future[Any] = Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
    return future


class _Admin:
    """What the functions call on an AdminClient: describe_cluster, list_topics, create_topics."""

    def __init__(self, racks: dict[int, str | None], topics: dict[str, Any] | None = None,
                 create_error: KafkaException | None = None, partitions: int = 0) -> None:
        self.racks = racks
        self.topics = topics or {}
        self.create_error = create_error
        self.created: list[Any] = []
        self.partitions = partitions

    def describe_cluster(self, request_timeout: float) -> Future[Any]:
        nodes = [SimpleNamespace(id=b, rack=r) for b, r in reversed(list(self.racks.items()))]
        return _done(SimpleNamespace(nodes=nodes))

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        if topic is not None:  # wait_for_leaders: the created topic, every partition led
            led = {p: SimpleNamespace(leader=1) for p in range(self.partitions)}
            return SimpleNamespace(topics={topic: SimpleNamespace(error=None, partitions=led)})
        return SimpleNamespace(topics=self.topics)

    def create_topics(self, topics: list[Any], **kwargs: Any) -> dict[str, Future[Any]]:
        self.created.extend(topics)
        return {t.topic: _done(error=self.create_error) for t in topics}


class TestClusterRacks:
    def test_racks_by_broker_id_an_empty_rack_is_none(self) -> None:
        assert cluster_racks(_Admin({3: "c", 1: "a", 2: ""})) == {1: "a", 2: None, 3: "c"}

    def test_a_failed_describe_names_bootstrap_servers(self) -> None:
        class Failing(_Admin):
            def describe_cluster(self, request_timeout: float) -> Future[Any]:
                return _done(error=KafkaException(KafkaError(KafkaError._TRANSPORT)))

        with pytest.raises(ClusterError, match=r"describe_cluster failed: .*check bootstrap\.servers"):
            cluster_racks(Failing({}))


class TestMissingTopics:
    def test_unknown_and_erroneous_topics_are_missing(self) -> None:
        topics = {"ok": SimpleNamespace(error=None), "broken": SimpleNamespace(error=KafkaError(3))}
        assert missing_topics(_Admin({}, topics), ["ok", "broken", "absent", "absent"]) == ["absent", "broken"]


class TestCreateRackAwareTopic:
    def test_the_computed_assignment_is_what_is_created(self) -> None:
        """3 brokers on 3 racks, 6 partitions, RF 2, start index 0: each partition's two replicas on two racks."""
        admin = _Admin({1: "a", 2: "b", 3: "c"}, partitions=6)
        assignment = create_rack_aware_topic(admin, "orders", 6, 2, fixed_start_index=0, config={"x": "1"})
        (created,) = admin.created
        assert created.topic == "orders" and created.num_partitions == 6
        assert created.replica_assignment == [assignment[p] for p in range(6)]
        racks = {1: "a", 2: "b", 3: "c"}
        assert all(len({racks[b] for b in replicas}) == 2 for replicas in assignment.values())

    def test_a_given_assignment_is_created_as_given_without_reading_the_cluster(self) -> None:
        admin = _Admin({})
        given = {0: [2, 1], 1: [1, 2]}
        assert create_rack_aware_topic(admin, "t", 99, 99, assignment=given, wait=False) == given
        assert admin.created[0].replica_assignment == [[2, 1], [1, 2]]

    def test_an_impossible_placement_fails_before_touching_the_cluster(self) -> None:
        admin = _Admin({1: "a", 2: "b"})
        with pytest.raises(PlacementError):
            create_rack_aware_topic(admin, "t", 3, 3, wait=False)
        assert admin.created == []

    def test_a_refused_topic_names_it_and_the_likely_causes(self) -> None:
        admin = _Admin({1: "a", 2: "b"}, create_error=KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS)))
        with pytest.raises(ClusterError, match=r"creating topic 't' .* may already exist") as caught:
            create_rack_aware_topic(admin, "t", 2, 2, wait=False)
        assert caught.value.kafka_error is not None
