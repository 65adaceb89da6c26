"""Arguments the plain ``confluent_kafka.Producer`` refuses are refused the same way, on both paths."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from tests.unit._producer_fakes import TOPIC, Harness


class TestLikeThePlainClient:
    def test_partition_none_is_a_type_error(self) -> None:
        h = Harness()
        with pytest.raises(TypeError, match="'NoneType' object cannot be interpreted as an integer"):
            h.producer.produce(TOPIC, b"v", partition=None)  # type: ignore[arg-type]
        assert h.fake.sent == []
        h.close()

    @pytest.mark.parametrize("call", ["poll", "flush"])
    def test_a_none_timeout_is_a_type_error_not_forever(self, call: str) -> None:
        h = Harness()
        with pytest.raises(TypeError, match="must be real number, not NoneType"):
            getattr(h.producer, call)(None)
        h.close()


@pytest.mark.parametrize("call", ["poll", "flush"])
def test_the_plain_client_says_the_same(call: str) -> None:
    """The reference: what confluent_kafka.Producer raises for the same calls (no broker needed)."""
    plain = Producer({"bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(TypeError, match="must be real number, not NoneType"):
        getattr(plain, call)(None)
    with pytest.raises(TypeError, match="'NoneType' object cannot be interpreted as an integer"):
        plain.produce(TOPIC, b"v", partition=None)


#: close() arguments the plain client accepts and ignores (confluent-kafka 2.16: each returns True)
_CLOSE_ARGS: list[tuple[tuple[object, ...], dict[str, object]]] = [
    ((5,), {}), ((None,), {}), (("x",), {}), ((True,), {}), ((1, 2), {}), ((), {"foo": 1}), ((), {"timeout": 1}),
]


@pytest.mark.parametrize(("args", "kwargs"), _CLOSE_ARGS)
class TestCloseArguments:
    def test_accepted_like_the_plain_client(
        self, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> None:
        """close(...) returns True whatever it is given, and the producer is closed afterwards."""
        h = Harness()
        assert h.producer.close(*args, **kwargs) is True
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            h.producer.produce(TOPIC, b"v")
        assert h.producer.close(*args, **kwargs) is True  # a second close, as the plain client allows

    def test_the_plain_client_accepts_them(self, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        """The reference: confluent_kafka.Producer.close takes the same arguments and returns True."""
        plain = Producer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0})
        assert plain.close(*args, **kwargs) is True
