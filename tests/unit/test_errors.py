"""The exception hierarchy (mutepro.errors): one root callers can catch, the Kafka error kept on it, and each
subclass also what Python code expects of it where it stands in for a built-in."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from mutepro import errors
from mutepro.spark.errors import IdentityError, SinkDeliveryError


@pytest.mark.parametrize("cls", [errors.ClusterError, errors.PrerequisiteError, errors.ConfigError,
                                 errors.ExtensionMissing, SinkDeliveryError, IdentityError])  # fmt: skip
def test_every_error_has_the_one_root(cls: type[Exception]) -> None:
    assert issubclass(cls, errors.MuteproError)


def test_the_kafka_error_is_kept() -> None:
    cause = KafkaError(KafkaError._TRANSPORT)
    err = errors.MuteproError("no broker", kafka_error=cause)
    assert (str(err), err.kafka_error) == ("no broker", cause)
    assert errors.MuteproError("plain").kafka_error is None


def test_stand_ins_for_built_ins_are_caught_as_them() -> None:
    """An ``except ImportError`` around ``import mutepro`` and an ``except ValueError`` around a header decode
    still work."""
    assert issubclass(errors.ExtensionMissing, ImportError)
    assert issubclass(IdentityError, ValueError)
    assert issubclass(errors.PrerequisiteError, errors.ClusterError)
