"""MuteProducer's construction inputs, read once: the policy argument, the application's callbacks taken out of
the librdkafka config, and the librdkafka settings mutepro sizes itself by (with librdkafka's defaults, written
down here only)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mutepro.errors import ConfigError
from mutepro.mute.store import BreakerStore, make_store
from mutepro.partition.protocols import DefaultMutingPartitioner
from mutepro.partition.sticky import StickyChooser, linger_from_config
from mutepro.policy.effective import Policy
from mutepro.policy.schema import (
    DEFAULT_MESSAGE_TIMEOUT_MS,
    DEFAULT_QUEUE_MAX_KBYTES,
    DEFAULT_QUEUE_MAX_MESSAGES,
    TopicPolicy,
)

#: librdkafka's defaults for the settings mutepro reads (``CONFIGURATION.md``; the numbers live in the schema).
LIBRDKAFKA_DEFAULTS = {
    "queue.buffering.max.messages": DEFAULT_QUEUE_MAX_MESSAGES,
    "queue.buffering.max.kbytes": DEFAULT_QUEUE_MAX_KBYTES,
    "message.timeout.ms": DEFAULT_MESSAGE_TIMEOUT_MS,
}


def coerce_policy(policy: Any) -> Policy | TopicPolicy:
    """The ``policy=`` argument as a Policy or TopicPolicy (None: the defaults; a path or mapping: loaded)."""
    if policy is None:
        return TopicPolicy()
    if isinstance(policy, Policy | TopicPolicy):
        return policy
    if isinstance(policy, Mapping | str | Path | os.PathLike):
        from mutepro.policy.loader import load_policy

        return load_policy(policy)
    raise TypeError(
        f"policy must be a Policy, a TopicPolicy, a path or a mapping (or None), got {type(policy).__name__}"
    )


def topic_policy(policy: Policy | TopicPolicy, topic: str) -> TopicPolicy:
    """The policy of ``topic``: its entry in the :class:`~mutepro.policy.Policy` (the defaults for ``""``), or the
    one TopicPolicy the producer was given for every topic."""
    if isinstance(policy, Policy):
        return policy.for_topic(topic) if topic else policy.defaults
    return policy


def refuse_mutepro_keys(conf: Mapping[str, Any]) -> None:
    bad = sorted(k for k in conf if k.startswith("mutepro."))
    if bad:
        raise ConfigError(
            f"{bad[0]}: mutepro settings do not go in the librdkafka config dict; pass them as "
            "MuteProducer(config, policy={...}) or in a YAML policy (MuteProducer.from_policy)"
        )


def check_tick(tick_interval_s: float) -> None:
    if not 0.001 <= tick_interval_s <= 10:
        raise ConfigError(
            f"tick_interval_s: {tick_interval_s!r} is outside 0.001-10 s; the driver judges partitions once per "
            "tick (default 0.05)"
        )


class UserCallbacks:
    """The application's callbacks, taken out of the config (served from its poll(); ours go to librdkafka).

    A value the real client refuses (not callable, not a bool) stays in the config, so the wrapped producer raises
    exactly what confluent_kafka.Producer raises for it.
    """

    __slots__ = ("error_cb", "on_delivery", "only_errors", "stats_cb", "throttle_cb")

    def __init__(self, conf: dict[str, Any]) -> None:
        def take(key: str) -> Any:
            value = conf.get(key)
            return conf.pop(key, None) if value is None or callable(value) else None

        self.on_delivery: Any = take("on_delivery")
        self.error_cb: Any = take("error_cb")
        self.stats_cb: Any = take("stats_cb")
        self.throttle_cb: Any = take("throttle_cb")
        only_errors = conf.get("delivery.report.only.error", False)
        self.only_errors = only_errors is True
        if isinstance(only_errors, bool):
            conf.pop("delivery.report.only.error", None)


def setting(conf: Mapping[str, Any], key: str) -> int:
    """A numeric librdkafka setting, or librdkafka's default for it."""
    try:
        return int(conf.get(key, LIBRDKAFKA_DEFAULTS[key]))
    except (TypeError, ValueError):  # a form librdkafka reads and int() does not
        return LIBRDKAFKA_DEFAULTS[key]


def is_idempotent(conf: Mapping[str, Any]) -> bool:
    """Idempotent (or transactional): the rescue purge is not safe. librdkafka numbers a partition's messages when
    they are queued, so purging queued ones leaves a gap in the sequence; the broker answers the next batch with
    OUT_OF_ORDER_SEQUENCE_NUMBER and librdkafka bumps the epoch, after which it can no longer rule out duplicates,
    and keys came out of order (sequences 85 written before 84) on the real cluster."""
    return "transactional.id" in conf or str(conf.get("enable.idempotence", "false")).lower() in ("true", "1")


def default_partitioner(conf: Mapping[str, Any], defaults: TopicPolicy) -> DefaultMutingPartitioner:
    """The built-in partitioner for librdkafka's ``partitioner`` setting, sized like librdkafka's batches."""
    return DefaultMutingPartitioner(
        str(conf.get("partitioner", "consistent_random")),
        # Time only by default, as librdkafka's own sticky partitioner (sticky.partitioning.linger.ms). A byte
        # limit cuts batches: Java's 16 KB made them 32 messages of 512 B (-25 % throughput), and even batch.size
        # counted in value bytes (1,953 values of 512 B) overshoots librdkafka's 1 MB batch, which also holds each
        # record's overhead (1,919 of them): every switch left a 34-message batch behind, the mean batch was
        # ~950 messages against the plain client's ~1,450, and a CPU-starved cluster handled half the messages.
        sticky_bytes=defaults.partitioner.sticky_bytes or 0,
        linger_s=linger_from_config(conf),
    )


def check_accelerate(accelerate: object) -> None:
    """The retired ``accelerate=`` argument: the C extension is the only per-message path now. ``True`` (what it
    always meant where the extension was built) still works, with a DeprecationWarning; ``False`` asked for the
    pure-Python path, which is gone: a ConfigError rather than silently running C."""
    if accelerate is None:
        return
    if accelerate is True:
        warnings.warn(
            "MuteProducer(accelerate=True) is deprecated: the C extension is the only path and always used; "
            "drop the argument", DeprecationWarning, stacklevel=3,
        )
        return
    raise ConfigError(
        f"accelerate={accelerate!r}: MuteProducer no longer has a pure-Python path (the C extension "
        "mutepro.producer._fastpath runs every message); drop the argument"
    )


def store_of(policy: Policy | TopicPolicy) -> BreakerStore | None:
    """The breaker store a policy's ``state:`` section names (None: the manager's in-memory default)."""
    state = policy.state if isinstance(policy, Policy) else None
    return make_store(state.backend, state.url, state.key_prefix) if state is not None else None


def sticky_chooser(default: DefaultMutingPartitioner | None, partitioner_name: str) -> StickyChooser | None:
    """The built-in partitioner's unkeyed choice, called directly on the hot path (one call, not three).

    Only where librdkafka itself spreads NULL keys randomly (the *_random partitioners and random): under
    consistent / murmur2 / fnv1a a NULL key is hashed like b"" and must land on that hash's partition.
    """
    null_is_random = partitioner_name == "random" or partitioner_name.endswith("_random")
    return default.chooser if default is not None and null_is_random else None


#: Java's producer setting for KIP-1123 rack-aware partitioning. librdkafka has no such property (it would refuse
#: it with "No such configuration property"), so mutepro reads it out of its own copy of the config and passes the
#: rest on; ``client.rack`` stays in (librdkafka accepts it for every client type and sends it to nobody on the
#: produce path: the brokers see it only in a consumer's fetch requests, KIP-392).
RACK_AWARE_KEY = "partitioner.rack.aware"


def rack_awareness(conf: dict[str, Any], policy: Policy | TopicPolicy) -> tuple[str | None, bool]:
    """``(client rack, on for every topic)`` for rack-aware partitioning; ``(None, False)`` when it is off.

    Takes ``partitioner.rack.aware`` out of ``conf`` (mutepro's own copy). It is on for every topic with that key
    true, for the topics whose policy says ``partitioner.rack_aware: true`` otherwise; either way it needs
    ``client.rack``, and a rack-aware setting without one is an error rather than a silent no-op.
    """
    raw = conf.pop(RACK_AWARE_KEY, False)
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        raw = raw.strip().lower() == "true"
    if not isinstance(raw, bool):
        raise ConfigError(f"{RACK_AWARE_KEY}: expected true or false, got {raw!r}")
    topics = [policy] if isinstance(policy, TopicPolicy) else [policy.defaults, *policy.topics.values()]
    wanted = raw or any(t.partitioner.rack_aware for t in topics)
    if not wanted:
        return None, False
    rack = conf.get("client.rack")
    if not isinstance(rack, str) or not rack.strip():
        where = RACK_AWARE_KEY if raw else "partitioner.rack_aware (policy)"
        raise ConfigError(
            f"client.rack: {where} is on but the client config has no client.rack; set client.rack to the "
            "producer's rack (the broker.rack of the brokers it should prefer; the Spark sink also derives it from "
            "MUTEPRO_CLIENT_RACK or the executor's cloud zone), or turn rack-aware partitioning off"
        )
    return rack.strip(), raw
