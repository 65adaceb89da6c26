"""Java producer option names users paste from jobs that used Spark's built-in Kafka sink.

librdkafka shares most names with the Java client, but not all: a Java-only name makes librdkafka fail with
"No such configuration property" at the first task, far from the option. The sink translates the names that
have an exact librdkafka equivalent and refuses the others before any row is written, naming what to use.
"""

from __future__ import annotations

from collections.abc import Callable

from mutepro.errors import ConfigError

#: Java name -> (librdkafka name, value conversion).
_TRANSLATED: dict[str, tuple[str, Callable[[str], str]]] = {
    "delivery.timeout.ms": ("message.timeout.ms", str),
    "buffer.memory": ("queue.buffering.max.kbytes", lambda v: str(max(1, int(v) // 1024))),
    "max.request.size": ("message.max.bytes", str),
    "send.buffer.bytes": ("socket.send.buffer.bytes", str),
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", str),
}

#: Java name -> what to write instead (no one-to-one translation exists).
_REFUSED: dict[str, str] = {
    "max.block.ms": "no librdkafka equivalent: the sink never blocks on a full queue, it serves delivery reports "
    "and retries; drop the option (mutepro.flushTimeout bounds the end-of-task wait)",
    "partitioner.class": "use kafka.partitioner (murmur2_random, the sink's default, places keys like Java's)",
    "sasl.jaas.config": "use kafka.sasl.mechanism, kafka.sasl.username and kafka.sasl.password",
    "key.serializer": "keys are written as binary (strings as UTF-8); drop the option, as Spark's sink requires",
    "value.serializer": "values are written as binary (strings as UTF-8); drop the option, as Spark's sink requires",
    "interceptor.classes": "librdkafka has no Java interceptors; drop the option",
    "metric.reporters": "librdkafka has no Java metric reporters; use kafka.statistics.interval.ms",
}

_STORE_HINT = (
    "convert the store to PEM files and use kafka.ssl.ca.location / ssl.certificate.location / ssl.key.location"
)


def translate_java_option(name: str, value: str) -> tuple[str, str]:
    """The librdkafka (name, value) for a client option given without its ``kafka.`` prefix.

    Names librdkafka knows are returned unchanged; Java-only names are translated or refused with a
    :class:`~mutepro.errors.ConfigError` naming the option (with its ``kafka.`` prefix) and the replacement.
    """
    if name in _TRANSLATED:
        target, convert = _TRANSLATED[name]
        try:
            return target, convert(value)
        except ValueError as err:
            raise ConfigError(f"kafka.{name}: expected an integer, got {value!r}") from err
    if name in _REFUSED:
        raise ConfigError(f"kafka.{name} is a Java producer option librdkafka does not take: {_REFUSED[name]}")
    if name.startswith(("ssl.truststore.", "ssl.keystore.")):
        raise ConfigError(f"kafka.{name} is a Java keystore option librdkafka does not take: {_STORE_HINT}")
    return name, value
