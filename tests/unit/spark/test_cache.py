"""The executors' cache of producers (mutepro.spark.cache): the mute state a policy's store gives, and each
executor's own rack."""

from __future__ import annotations

import pytest

from mutepro.spark.options import parse_options
from mutepro.spark.sinkpolicy import load_sink_policy

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


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
    """Each executor takes its own rack from its environment when kafka.client.rack is not given."""

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
