"""The rack audit on hand-built snapshots: missing racks, leader skew, zone gaps."""

from __future__ import annotations

from mutepro.racks.audit import ClusterSnapshot, PartitionState, audit, leader_skew, partition_issue

RACKS: dict[int, str | None] = {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a", 5: "rack-b", 6: "rack-c"}


def _snapshot(
    *parts: tuple[str, int, tuple[int, ...]], brokers: dict[int, str | None] | None = None
) -> ClusterSnapshot:
    return ClusterSnapshot(
        RACKS if brokers is None else brokers, tuple(PartitionState(t, p, r, r[0]) for t, p, r in parts)
    )


class TestPartitionIssue:
    def test_rf3_two_on_one_rack_misses_a_rack(self) -> None:
        """[1, 4, 2] on a, a, b misses rack-c and needs one move."""
        issue = partition_issue(PartitionState("t", 0, (1, 4, 2), 1), RACKS)
        assert issue is not None
        assert issue.missing_racks == ("rack-c",)
        assert issue.duplicated_racks == ("rack-a",)
        assert issue.moves_needed == 1

    def test_rf2_on_two_racks_is_fine(self) -> None:
        """RF 2 needs two racks, not three."""
        assert partition_issue(PartitionState("t", 0, (1, 2), 1), RACKS) is None

    def test_replica_on_unknown_broker_covers_no_rack(self) -> None:
        """A replica on a broker describe_cluster does not list leaves its rack uncovered."""
        issue = partition_issue(PartitionState("t", 0, (1, 2, 9), 1), RACKS)
        assert issue is not None and issue.missing_racks == ("rack-c",)


class TestLeaderSkew:
    def test_six_partitions_must_split_evenly(self) -> None:
        """6 partitions on 3 racks led 3/2/1 is skew 2 against an ideal of 0."""
        skew = leader_skew("t", [1, 1, 1, 2, 2, 3], RACKS, 6)
        assert skew is not None and skew.skew == 2 and skew.ideal_skew == 0

    def test_seven_partitions_may_differ_by_one(self) -> None:
        """7 partitions led 3/2/2 is as good as it gets."""
        assert leader_skew("t", [1, 1, 1, 2, 2, 3, 3], RACKS, 7) is None


class TestAudit:
    def test_clean_topic(self) -> None:
        """Rack-complete partitions with leaders 2/2/2 audit clean."""
        snap = _snapshot(*(("t", p, r) for p, r in enumerate([(1, 2, 3), (2, 3, 1), (3, 1, 2)] * 2)))
        report = audit(snap)
        assert report.clean, report.to_dict()

    def test_rf2_topic_starving_a_zone(self) -> None:
        """RF 2 on racks a and b only: rack-c has 0 local partitions where 4 of 6 are its share."""
        snap = _snapshot(*(("t", p, (1, 2) if p % 2 else (2, 1)) for p in range(6)))
        report = audit(snap)
        gaps = {g.rack: g for g in report.zone_gaps}
        assert set(gaps) == {"rack-c"}
        assert gaps["rack-c"].excessive and gaps["rack-c"].min_local == 4
        assert gaps["rack-c"].cross_zone_fraction == 1.0
        assert not report.clean

    def test_balanced_rf2_gaps_are_not_excessive(self) -> None:
        """RF 2 spread 4/4/4 leaves each rack 2 cross-zone partitions, which is unavoidable."""
        layout = [(1, 2), (2, 3), (3, 1)] * 2
        report = audit(_snapshot(*(("t", p, r) for p, r in enumerate(layout))))
        assert len(report.zone_gaps) == 3
        assert not any(g.excessive for g in report.zone_gaps)
        assert report.clean

    def test_brokers_without_rack_make_it_unclean(self) -> None:
        """A broker without broker.rack is reported."""
        report = audit(_snapshot(("t", 0, (1,)), brokers={1: "rack-a", 2: None}))
        assert report.brokers_without_rack == (2,)
        assert not report.clean

    def test_preferred_leaders_mode(self) -> None:
        """leaders='preferred' judges first replicas even when live leaders differ."""
        parts = tuple(PartitionState("t", p, (1, 2, 3), leader=(p % 3) + 1) for p in range(3))
        snap = ClusterSnapshot(RACKS, parts)
        assert audit(snap).leader_skews == ()
        assert audit(snap, leaders="preferred").leader_skews[0].skew == 3

    def test_to_dict_is_json_ready(self) -> None:
        """The JSON form carries the verdict and the partition issue fields."""
        doc = audit(_snapshot(("t", 0, (1, 4, 2)))).to_dict()
        assert doc["clean"] is False
        assert doc["partition_issues"][0]["missing_racks"] == ["rack-c"]


class _Done:
    def __init__(self, value: object = None, error: BaseException | None = None) -> None:
        self._value, self._error = value, error

    def result(self, timeout: float | None = None) -> object:
        if self._error is not None:
            raise self._error
        return self._value


class _AdminLearning:
    """An admin client whose brokers learn topic ``t`` after ``unknown_for`` describes (each answers
    ``code`` until then)."""

    def __init__(self, unknown_for: int, code: int) -> None:
        from types import SimpleNamespace as NS

        self.describes = 0
        self._unknown_for, self._code = unknown_for, code
        node = NS(id=1, rack="rack-a")
        self._cluster = NS(nodes=[node])
        self._topic = NS(partitions=[NS(id=0, replicas=[node], leader=node, isr=[node])])

    def describe_cluster(self, request_timeout: float) -> _Done:
        return _Done(self._cluster)

    def describe_topics(self, topics: object, request_timeout: float) -> dict[str, _Done]:
        from confluent_kafka import KafkaError, KafkaException

        self.describes += 1
        if self.describes <= self._unknown_for:
            return {"t": _Done(error=KafkaException(KafkaError(self._code)))}
        return {"t": _Done(self._topic)}


class TestSnapshotCluster:
    def test_a_topic_not_yet_known_to_the_broker_asked_is_asked_again(self) -> None:
        """UNKNOWN_TOPIC_OR_PART right after a create (a broker whose metadata lags the controller's): retried,
        as Kafka's clients treat it, and the snapshot has the topic."""
        from confluent_kafka import KafkaError

        from mutepro.racks.audit import snapshot_cluster

        admin = _AdminLearning(2, KafkaError.UNKNOWN_TOPIC_OR_PART)
        snap = snapshot_cluster(admin, ["t"], timeout_s=5.0)  # type: ignore[arg-type]
        assert [(p.topic, p.partition, p.leader) for p in snap.partitions] == [("t", 0, 1)]
        assert admin.describes == 3

    def test_other_errors_fail_at_once_naming_the_topics(self) -> None:
        import pytest
        from confluent_kafka import KafkaError

        from mutepro.errors import ClusterError
        from mutepro.racks.audit import snapshot_cluster

        admin = _AdminLearning(1, KafkaError.TOPIC_AUTHORIZATION_FAILED)
        with pytest.raises(ClusterError, match=r"\['t'\]"):
            snapshot_cluster(admin, ["t"], timeout_s=5.0)  # type: ignore[arg-type]
        assert admin.describes == 1
