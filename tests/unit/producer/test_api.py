"""The parts of MuteProducer's API that pass through or read state (mutepro.producer.api): produce_batch on the
producer's own produce, the calls forwarded to the wrapped client, construction from a policy, and the read-only
views (outstanding, held, repr). (produce_batch compared with the real client: tests/unit/test_dropin.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError

from mutepro import MuteProducer
from mutepro.errors import ConfigError
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import TOPIC, Harness, keys_by_home


class TestProduceBatch:
    def test_accepted_messages_are_sent_and_a_rejected_one_gets_its_error(self) -> None:
        """Capacity 2 in librdkafka: two accepted, the third marked _QUEUE_FULL in its own dict."""
        h = Harness()
        h.fake.capacity = 2
        messages: list[dict[str, Any]] = [{"value": b"a", "partition": 0}, {"value": b"b", "partition": 1},
                                          {"value": b"c", "partition": 2}]
        assert h.producer.produce_batch(TOPIC, messages, callback=h.callback) == 2
        assert [(s.value, s.partition) for s in h.fake.sent] == [(b"a", 0), (b"b", 1)]
        assert "_error" not in messages[0] and messages[2]["_error"].code() == KafkaError._QUEUE_FULL
        h.close()

    def test_an_empty_batch_is_zero_and_bad_arguments_are_named(self) -> None:
        h = Harness()
        assert h.producer.produce_batch(TOPIC, []) == 0
        with pytest.raises(TypeError, match="argument 'topic' must be str, not int"):
            h.producer.produce_batch(1, [])  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="argument 'partition' must be int, not str"):
            h.producer.produce_batch(TOPIC, [], partition="0")  # type: ignore[arg-type]
        h.close()

    def test_after_close_a_non_empty_batch_raises(self) -> None:
        h = Harness()
        h.close()
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            h.producer.produce_batch(TOPIC, [{"value": b"a"}])


class TestPassthrough:
    def test_other_client_calls_reach_the_wrapped_producer(self) -> None:
        h = Harness()
        assert set(h.producer.list_topics().topics) == {TOPIC}  # FakeInnerProducer.list_topics
        with pytest.raises(AttributeError):
            h.producer._not_forwarded  # noqa: B018  # private names are never forwarded
        h.close()

    def test_transactions_are_refused_once_closed(self) -> None:
        h = Harness()
        h.close()
        for call in (h.producer.init_transactions, h.producer.begin_transaction, h.producer.commit_transaction,
                     h.producer.abort_transaction, h.producer.send_offsets_to_transaction):
            with pytest.raises(RuntimeError, match="Producer has been closed"):
                call()

    def test_the_context_manager_closes(self) -> None:
        h = Harness()
        with h.producer as p:
            assert p is h.producer
        assert h.fake.closed


class TestFromPolicy:
    def test_the_policys_client_block_is_the_config_and_config_overrides_it(self, tmp_path: Path) -> None:
        path = tmp_path / "p.yaml"
        path.write_text("client:\n  bootstrap.servers: 127.0.0.1:1\n  linger.ms: 50\ndefaults:\n"
                        "  keyed_policy: fail\n")
        fake = FakeInnerProducer({TOPIC: 4})
        producer = MuteProducer.from_policy(path, config={"linger.ms": 7}, clock=FakeClock(),
                                            _inner_factory=fake.factory, _threads=False)
        try:
            assert fake.config["bootstrap.servers"] == "127.0.0.1:1" and fake.config["linger.ms"] == 7
            assert producer.mute_manager is producer._manager
        finally:
            producer.close(0)

    def test_without_bootstrap_servers_the_fix_is_named(self) -> None:
        with pytest.raises(ConfigError, match=r"client\.bootstrap\.servers"):
            MuteProducer.from_policy({"defaults": {"keyed_policy": "fail"}}, _threads=False)


class TestReadOnlyViews:
    def test_outstanding_held_and_repr(self) -> None:
        h = Harness(keyed_policy="hold")
        key = next(k for k, p in keys_by_home(h) if p == 1)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.produce(b"held", key)
        h.producer.produce(TOPIC, b"sent", partition=2)
        assert (h.producer.outstanding(TOPIC, 2), h.producer.outstanding(TOPIC, 1)) == (1, 0)
        assert (h.producer.held(), h.producer.held(TOPIC), h.producer.held("other")) == (1, 1, 0)
        assert f"muted={{'{TOPIC}': [1]}}" in repr(h.producer) and "outstanding=1" in repr(h.producer)
        h.close()

    def test_without_statistics_nothing_is_accumulated_or_in_flight(self) -> None:
        h = Harness()
        h.producer.produce(TOPIC, b"v", partition=0)
        assert (h.producer.accumulated(TOPIC, 0), h.producer.in_flight(TOPIC, 0)) == (0, 0)
        h.close()

    def test_wait_for_topic_on_an_unknown_topic_gives_up_at_its_timeout(self) -> None:
        h = Harness()
        assert h.producer.wait_for_topic("unknown", 0) is False
        assert "unknown" in h.producer._core.wanted_topics
        h.close()
