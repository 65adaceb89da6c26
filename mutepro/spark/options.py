"""The sink's options: Spark's Kafka sink names (``kafka.*``, ``topic``, ``includeHeaders``) plus mutepro's own.

Everything is checked on the driver, before a row is written: an unknown option, a Java-only client option or
a bad policy fails the write there, naming the option. Options arrive from Spark as strings (the data source
API lower-cases nothing but compares case-insensitively; so does this module).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mutepro.errors import ConfigError
from mutepro.producer.options import RACK_AWARE_KEY
from mutepro.spark.javaopts import translate_java_option
from mutepro.spark.sinkpolicy import load_sink_policy, read_policy_source

#: Options Spark itself puts in a data source's option map; accepted and ignored.
_SPARK_INTERNAL = {"checkpointlocation", "path", "queryname", "__dataframe_id__"}


#: ``mutepro.hedgeAfter``: see :func:`mutepro.spark.flushing.flush_task`.
DEFAULT_HEDGE_AFTER_S = 1.0
#: ``mutepro.idFormat``: how rows carry their identity (mutepro.spark.identity); the first is the default.
ID_FORMATS = ("binary", "strings")


@dataclass(frozen=True)
class SinkOptions:
    """Everything a task needs to write, picklable (it travels with every task)."""

    client: dict[str, str]  # the kafka.* options (Java names translated), over the policy's client block
    policy: dict[str, Any] = field(default_factory=dict)  # the user's policy as read (``${ENV}`` unresolved)
    topic: str | None = None
    include_headers: bool = True
    id_headers: bool = True
    id_format: str = "binary"  # ID_FORMATS: one binary header, or the older two strings
    flush_timeout_s: float | None = None
    hedge_after_s: float | None = DEFAULT_HEDGE_AFTER_S

    def client_config(self) -> dict[str, Any]:
        """The librdkafka settings: the sink's defaults, the policy's client block (``${ENV}`` resolved here),
        then the kafka.* options."""
        return load_sink_policy(self.policy, self.client).client

    @property
    def cache_key(self) -> str:
        """One producer per distinct (client config, policy) in a worker."""
        return json.dumps([sorted(self.client.items()), self.policy], sort_keys=True, default=str)


def parse_options(raw: Mapping[str, Any]) -> SinkOptions:
    """Validate Spark-style options into :class:`SinkOptions`; a :class:`ConfigError` names the bad option."""
    client: dict[str, str] = {}
    extra: dict[str, str] = {}
    policy_value: str | None = None
    topic: str | None = None
    include_headers = id_headers = True
    id_format = ID_FORMATS[0]
    flush_timeout: float | None = None
    hedge_after: float | None = DEFAULT_HEDGE_AFTER_S
    for name, value in raw.items():
        if not isinstance(name, str):
            raise ConfigError(f"option names must be strings, got {name!r}")
        lower = name.lower()
        text = _text(name, value)
        if lower.startswith("kafka."):
            key, converted = translate_java_option(name[len("kafka."):], text)
            extra[key] = converted
        elif lower == "topic":
            topic = text or None
        elif lower == "includeheaders":
            include_headers = _bool(name, text)
        elif lower in ("policy", "mutepro.policy"):
            policy_value = text
        elif lower == "mutepro.idheaders":
            id_headers = _bool(name, text)
        elif lower == "mutepro.idformat":
            id_format = text.strip().lower()
            if id_format not in ID_FORMATS:
                raise ConfigError(
                    f"option {name!r}: expected one of {', '.join(ID_FORMATS)} (binary: one x-mutepro-id header, "
                    f"the default; strings: x-mutepro-batch and x-mutepro-row, for readers older than it), got {text!r}"
                )
        elif lower == "mutepro.flushtimeout":
            flush_timeout = _seconds(name, text)
        elif lower == "mutepro.hedgeafter":
            hedge_after = _seconds(name, text, zero_means_off=True)
        elif lower in _SPARK_INTERNAL:
            continue
        else:
            known = ", ".join(sorted({"kafka.*", "topic", "includeHeaders", "policy", "mutepro.flushTimeout",
                                      "mutepro.hedgeAfter", "mutepro.idHeaders", "mutepro.idFormat"}))
            raise ConfigError(f"option {name!r} is not a mutepro sink option; known: {known}")
    policy = read_policy_source(policy_value) if policy_value else {}
    client.update(extra)
    # a bad policy, or one contradicting the client settings, fails here; ${ENV} is resolved with the driver's
    # environment for the check, and again on each executor with its own
    effective = load_sink_policy(policy, client).client
    if not effective.get("bootstrap.servers"):
        raise ConfigError(
            "kafka.bootstrap.servers: required (as for Spark's Kafka sink); set .option('kafka.bootstrap.servers', "
            "'host:9092') or client.bootstrap.servers in the policy"
        )
    _check_client(effective)
    return SinkOptions(client, policy, topic, include_headers, id_headers, id_format, flush_timeout, hedge_after)


def _check_client(client: dict[str, Any]) -> None:
    # librdkafka checks names and values when a client is built: build one here, on the driver, so a typo fails
    # the write before any task starts rather than in every task. It is dropped at once (it sends nothing).
    import confluent_kafka

    try:
        # no brokers and no log lines: only the settings are being checked
        # partitioner.rack.aware is read by mutepro (MuteProducer takes it out), not by librdkafka
        checked = {k: v for k, v in client.items() if k != RACK_AWARE_KEY}
        confluent_kafka.Producer({**checked, "bootstrap.servers": "", "log_level": 0})
    except (confluent_kafka.KafkaException, ValueError, TypeError) as err:
        raise ConfigError(f"kafka.* options: librdkafka refuses them: {err}") from err


def _text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ConfigError(f"option {name!r}: expected a string, number or boolean, got {type(value).__name__}")


def _bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ConfigError(f"option {name!r}: expected true or false, got {text!r}")


def _seconds(name: str, text: str, *, zero_means_off: bool = False) -> float | None:
    try:
        value = float(text)
    except ValueError as err:
        raise ConfigError(f"option {name!r}: expected seconds (a number), got {text!r}") from err
    if zero_means_off and value == 0:
        return None
    if not value > 0:  # NaN too
        more = " (0 turns it off)" if zero_means_off else ""
        raise ConfigError(f"option {name!r}: expected a positive number of seconds{more}, got {text!r}")
    return value
