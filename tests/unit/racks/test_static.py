"""KIP-345 helpers: group.instance.id derivation, uniqueness, session timeout advice, FENCED_INSTANCE_ID."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from mutepro.errors import ConfigError
from mutepro.racks.static import (
    MAX_INSTANCE_ID_LENGTH,
    MemberInfo,
    derive_instance_id,
    explain_fenced,
    find_conflicts,
    is_fenced,
    recommend_session_timeout_ms,
    sanitize_instance_id,
)


def _no_spark() -> None:
    return None


def _derive(
    env: dict[str, str],
    *,
    explicit: str | None = None,
    suffix: str | None = None,
    task_context: Callable[[], Any] = _no_spark,
) -> tuple[str, str]:
    iid = derive_instance_id(
        explicit, env=env, hostname=lambda: "host.example", task_context=task_context, suffix=suffix
    )
    return iid.value, iid.source


class TestDerive:
    def test_explicit_first(self) -> None:
        """An explicit id beats the environment."""
        assert _derive({"MUTEPRO_GROUP_INSTANCE_ID": "env-id"}, explicit="mine")[0] == "mine"

    def test_env_variable(self) -> None:
        """MUTEPRO_GROUP_INSTANCE_ID beats Kubernetes."""
        env = {"MUTEPRO_GROUP_INSTANCE_ID": "env-id", "KUBERNETES_SERVICE_HOST": "10.0.0.1", "POD_NAME": "p-0"}
        assert _derive(env) == ("env-id", "env MUTEPRO_GROUP_INSTANCE_ID")

    def test_kubernetes_pod_name_then_hostname(self) -> None:
        """In a pod, POD_NAME is used, else HOSTNAME."""
        k8s = {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
        assert _derive({**k8s, "POD_NAME": "consumer-0", "HOSTNAME": "x"})[0] == "consumer-0"
        assert _derive({**k8s, "HOSTNAME": "consumer-1"})[0] == "consumer-1"

    def test_hostname_env_outside_kubernetes_is_ignored(self) -> None:
        """HOSTNAME alone is not a pod name; the real hostname is used."""
        assert _derive({"HOSTNAME": "bash-set"}) == ("host.example", "hostname")

    def test_spark_executor_env(self) -> None:
        """SPARK_EXECUTOR_ID gives spark-exec-<id>."""
        assert _derive({"SPARK_EXECUTOR_ID": "3"})[0] == "spark-exec-3"

    def test_spark_task_context(self) -> None:
        """Inside a Spark task without executor env, the partition id is used."""
        ctx = SimpleNamespace(partitionId=lambda: 7)
        assert _derive({}, task_context=lambda: ctx)[0] == "spark-part-7"

    def test_suffix_and_sanitising(self) -> None:
        """A suffix is appended and illegal characters become dashes."""
        assert _derive({}, explicit="worker 7/eu@west", suffix="2")[0] == "worker-7-eu-west-2"


class TestSanitize:
    def test_long_ids_stay_distinct(self) -> None:
        """Two 300-char ids differing at the end stay distinct and legal."""
        a, b = sanitize_instance_id("x" * 299 + "a"), sanitize_instance_id("x" * 299 + "b")
        assert len(a) == len(b) == MAX_INSTANCE_ID_LENGTH and a != b

    def test_nothing_usable(self) -> None:
        """An id of only illegal characters is rejected."""
        with pytest.raises(ConfigError, match=r"group\.instance\.id"):
            sanitize_instance_id("@@@")


class TestUniqueness:
    def test_held_by_another_member(self) -> None:
        """A member already holding the id is a conflict explained as fencing."""
        members = [MemberInfo("m-1", "a", host="/10.0.0.1"), MemberInfo("m-2", "b")]
        report = find_conflicts("g", "a", members)
        assert not report.unique and report.holders[0].member_id == "m-1"
        assert "FENCED_INSTANCE_ID" in report.explain()

    def test_own_member_is_not_a_conflict(self) -> None:
        """This process's own member id does not count."""
        assert find_conflicts("g", "a", [MemberInfo("m-1", "a")], own_member_id="m-1").unique

    def test_duplicates_among_members(self) -> None:
        """Two members with one id are reported."""
        report = find_conflicts("g", "z", [MemberInfo("m-1", "a"), MemberInfo("m-2", "a")])
        assert report.duplicated_ids == ("a",) and not report.unique


class _Future:
    def __init__(self, outcome: object) -> None:
        self.outcome = outcome

    def result(self, timeout: float | None = None) -> object:
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


class _Admin:
    """describe_consumer_groups answering from a script of outcomes (exceptions or descriptions)."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    def describe_consumer_groups(self, groups: list[str], request_timeout: float) -> dict[str, _Future]:
        self.calls += 1
        return {groups[0]: _Future(self.outcomes.pop(0))}


class TestDescribeGroup:
    def test_retries_while_the_coordinator_moves(self) -> None:
        """NOT_COORDINATOR then COORDINATOR_LOAD_IN_PROGRESS are retried; the description that follows is returned."""
        from mutepro.racks.static import describe_group

        moved = KafkaException(KafkaError(KafkaError.NOT_COORDINATOR))
        loading = KafkaException(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS))
        admin = _Admin(moved, loading, "described")
        assert describe_group(admin, "g", timeout_s=10) == "described" and admin.calls == 3

    def test_other_errors_are_cluster_errors_keeping_the_kafka_error(self) -> None:
        """GROUP_AUTHORIZATION_FAILED is not retried: a ClusterError naming the call, with the KafkaError."""
        from mutepro.errors import ClusterError
        from mutepro.racks.static import describe_group

        admin = _Admin(KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)))
        with pytest.raises(ClusterError, match="describe_consumer_groups") as info:
            describe_group(admin, "g", timeout_s=10)
        assert admin.calls == 1 and info.value.kafka_error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


class TestSessionTimeout:
    def test_worked_example(self) -> None:
        """A 40 s restart with safety 1.5 → 60000 ms, heartbeat 3000 ms."""
        advice = recommend_session_timeout_ms(40)
        assert advice.config() == {"session.timeout.ms": 60000, "heartbeat.interval.ms": 3000}
        assert any("60000" in line for line in advice.reasoning)

    def test_clamped_to_broker_minimum(self) -> None:
        """A 2 s restart is raised to 6000 ms with heartbeat a third of it."""
        advice = recommend_session_timeout_ms(2)
        assert (advice.session_timeout_ms, advice.heartbeat_interval_ms) == (6000, 2000)

    def test_clamped_to_broker_maximum(self) -> None:
        """An hour-long restart is capped at 30 minutes and says restarts beyond it rebalance."""
        advice = recommend_session_timeout_ms(3600)
        assert advice.session_timeout_ms == 1_800_000
        assert any("capped" in line for line in advice.reasoning)

    def test_rejects_bad_inputs(self) -> None:
        """Negative restart time and a safety factor below 1 name the field."""
        with pytest.raises(ConfigError, match="restart_seconds"):
            recommend_session_timeout_ms(-1)
        with pytest.raises(ConfigError, match="safety_factor"):
            recommend_session_timeout_ms(10, safety_factor=0.5)


class TestFenced:
    def test_kafka_error_and_exception(self) -> None:
        """KafkaError, KafkaException and the bare code 82 are all recognised."""
        err = KafkaError(KafkaError.FENCED_INSTANCE_ID)
        assert is_fenced(err) and is_fenced(KafkaException(err)) and is_fenced(82)
        text = explain_fenced(err, instance_id="pod-0")
        assert text is not None and "'pod-0'" in text and "fatal" in text

    def test_other_errors_are_not_explained(self) -> None:
        """Any other error gives None."""
        assert explain_fenced(KafkaError(KafkaError.REBALANCE_IN_PROGRESS)) is None
        assert not is_fenced(ValueError("x"))
