"""One MuteProducer per Python worker (mutepro.spark.cache): the task's delivery errors counted with the first few
kept, one producer per (client config, policy) reused by every task, the mute state's store chosen once (local
when Redis does not answer, said once), and each executor's own rack."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, Message

from mutepro.spark import cache
from mutepro.spark.options import parse_options
from mutepro.spark.sinkpolicy import load_sink_policy
from tests.unit.spark.test_options import BASE


class TestErrorLog:
    def test_counts_every_error_and_keeps_the_first_distinct_ones(self) -> None:
        """Partitions 0..6 fail once each, then 0 again: 8 errors, the first five places kept, 0 counted twice."""
        errors = cache.ErrorLog()
        errors.record(None, Message(topic="t", partition=0))  # a success: nothing
        for p in [*range(7), 0]:
            errors.record(KafkaError(KafkaError._MSG_TIMED_OUT), Message(topic="t", partition=p))
        assert errors.count == 8
        assert sorted((p, n) for (_, p, _), n in errors.first.items()) == [(0, 2), (1, 1), (2, 1), (3, 1), (4, 1)]
        assert all(text.endswith("(_MSG_TIMED_OUT)") for (_, _, text) in errors.first)
        errors.reset()
        assert (errors.count, errors.first) == (0, {})


class TestWorkers:
    def test_one_producer_per_options_reused_and_discarded(self) -> None:
        options = parse_options({"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t"})
        try:
            worker = cache.worker_for(options)
            assert cache.worker_for(options) is worker
        finally:
            cache.discard(options)
        assert cache.worker_for(options) is not worker
        cache.discard(options)


class TestUnreachableRedis:
    def test_local_state_said_once(self, capsys: pytest.CaptureFixture[str]) -> None:
        """A policy's Redis that cannot be reached gives in-process mute state and one warning, not two."""
        from mutepro.logs import configure_logging, reset_logging
        from mutepro.mute.store import MemoryStore
        from mutepro.spark import cache

        configure_logging("info", "json")
        policy = load_sink_policy(
            {"state": {"backend": "redis", "url": "redis://127.0.0.1:1/0", "key_prefix": "unreachable"}},
            parse_options(BASE).client,
        )
        cache._said.discard("redis://127.0.0.1:1/0")
        try:
            assert isinstance(cache._store(policy), MemoryStore)
            assert isinstance(cache._store(policy), MemoryStore)
        finally:
            reset_logging()
        assert capsys.readouterr().err.count("spark_mute_state_local") == 1


class TestExecutorRack:
    def test_an_executor_without_client_rack_takes_its_environments(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from mutepro.spark.cache import _executor_rack

        monkeypatch.setenv("MUTEPRO_CLIENT_RACK", "use1-az3")
        policy = load_sink_policy({}, {"bootstrap.servers": "b:1", "partitioner.rack.aware": "true"})
        config = dict(policy.client)
        _executor_rack(config, policy)
        assert config["client.rack"] == "use1-az3"

    def test_a_given_client_rack_or_rack_awareness_off_is_left_alone(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from mutepro.spark.cache import _executor_rack

        monkeypatch.setenv("MUTEPRO_CLIENT_RACK", "use1-az3")
        on = load_sink_policy({}, {"bootstrap.servers": "b:1", "partitioner.rack.aware": "true", "client.rack": "x"})
        config = dict(on.client)
        _executor_rack(config, on)
        assert config["client.rack"] == "x"
        off = load_sink_policy({}, {"bootstrap.servers": "b:1"})
        config = dict(off.client)
        _executor_rack(config, off)
        assert "client.rack" not in config
