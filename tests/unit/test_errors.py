"""The exception hierarchy (mutepro.errors): one root every mutepro exception derives from, the Kafka error kept
on the one that wraps it, and the missing extension an ImportError too."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from mutepro import errors
from mutepro.policy.errors import PolicyError
from mutepro.spark.errors import IdentityError, SinkDeliveryError


class TestHierarchy:
    @pytest.mark.parametrize("cls", [
        errors.ClusterError, errors.PrerequisiteError, errors.ConfigError, errors.ExtensionMissing,
        PolicyError, SinkDeliveryError, IdentityError,
    ])
    def test_one_root(self, cls: type[Exception]) -> None:
        assert issubclass(cls, errors.MuteproError)

    def test_a_missing_prerequisite_is_a_cluster_error(self) -> None:
        assert issubclass(errors.PrerequisiteError, errors.ClusterError)

    def test_the_missing_extension_is_caught_as_an_import_error(self) -> None:
        with pytest.raises(ImportError, match="C extension"):
            raise errors.ExtensionMissing("mutepro needs its C extension")


class TestKafkaError:
    def test_the_wrapped_kafka_error_is_kept(self) -> None:
        kafka = KafkaError(KafkaError._TIMED_OUT)
        err = errors.ClusterError("metadata request timed out", kafka_error=kafka)
        assert err.kafka_error is kafka and str(err) == "metadata request timed out"

    def test_none_without_one(self) -> None:
        assert errors.ConfigError("linger.ms: bad").kafka_error is None
