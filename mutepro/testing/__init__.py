"""Test tooling for applications using mutepro: pytest plugins and a restartable Redis server.

- :mod:`~mutepro.testing.fixtures`: ``kafka_cluster``, ``topic_factory`` and ``redis_url`` fixtures
  (``pytest_plugins = ["mutepro.testing.fixtures"]``).
- :mod:`~mutepro.testing.dropin`: ``pytest -p mutepro.testing.dropin`` runs a suite with ``confluent_kafka.Producer``
  replaced by MuteProducer.
- :mod:`~mutepro.testing.redis_server`: a real ``redis-server`` an outage test can stop and start.
- :mod:`~mutepro.testing.plain_sink`: the Spark sink's write loop through a plain ``confluent_kafka.Producer``
  (``benchmarks/spark_bench.py``'s ceiling).

Nothing is imported here: the plugins import pytest, and the library must not (``mutepro demo`` runs without it).
"""

__all__: list[str] = []
