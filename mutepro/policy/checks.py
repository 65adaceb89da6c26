"""Checks between mutepro's thresholds and the librdkafka settings in ``client:``.

- ``slow_call.threshold_ms`` must be below ``message.timeout.ms`` (librdkafka default 300000; ``0`` means no
  timeout). With ``message.timeout.ms: 30000`` and ``threshold_ms: 45000`` every slow message has already
  failed with ``_MSG_TIMED_OUT`` before it could count as slow, so the slow-call detector could never fire.
- ``congestion.min_messages`` must not exceed ``queue.buffering.max.messages`` (default 100000): a partition
  can never hold more than the whole producer queue, so congestion muting would be dead config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mutepro.policy.paths import KeyPath, format_path
from mutepro.policy.schema import DEFAULT_MESSAGE_TIMEOUT_MS, DEFAULT_QUEUE_MAX_MESSAGES, TopicPolicy
from mutepro.policy.source import Source, describe
from mutepro.policy.translate import Translated

#: librdkafka accepts ``delivery.timeout.ms`` as an alias of ``message.timeout.ms``.
TIMEOUT_KEYS = ("message.timeout.ms", "delivery.timeout.ms")
QUEUE_KEYS = ("queue.buffering.max.messages",)
_TIMEOUT_PATH = format_path(("client", TIMEOUT_KEYS[0]))


@dataclass(frozen=True)
class ClientLimits:
    """The librdkafka limits mutepro's thresholds are checked against, with the key each came from."""

    message_timeout_ms: int = DEFAULT_MESSAGE_TIMEOUT_MS
    timeout_key: str = "message.timeout.ms (librdkafka default)"
    queue_max_messages: int = DEFAULT_QUEUE_MAX_MESSAGES
    queue_key: str = "queue.buffering.max.messages (librdkafka default)"


def client_limits(client: Mapping[str, Any], source: Source) -> tuple[ClientLimits, list[Translated]]:
    """Read the limits from ``client`` (ints or numeric strings); unreadable values become issues."""
    issues: list[Translated] = []
    for key, number in _limit_values(client):
        if number is None:
            path: KeyPath = ("client", key)
            issues.append(
                Translated(
                    path,
                    "client_int",
                    source.issue(path, expected="a whole number >= 0", message=f"{key} must be a whole number"),
                )
            )
    return limits_of(client), issues


def limits_of(client: Mapping[str, Any]) -> ClientLimits:
    """The limits of a librdkafka config (the defaults for what it does not set or sets unreadably). As in
    librdkafka, where both ``message.timeout.ms`` and its alias are set, the later one in the dict wins."""
    limits = ClientLimits()
    for key, number in _limit_values(client):
        if number is None:
            continue
        if key in TIMEOUT_KEYS:
            limits = ClientLimits(number, key, limits.queue_max_messages, limits.queue_key)
        else:
            limits = ClientLimits(limits.message_timeout_ms, limits.timeout_key, number, key)
    return limits


def slow_call_out_of_reach(policy: TopicPolicy, limits: ClientLimits) -> bool:
    """True when no message can be slow before it times out: the slow-call rule is on and its threshold is not
    below ``message.timeout.ms`` (``0`` is librdkafka's "no timeout": every threshold can be crossed)."""
    timeout = limits.message_timeout_ms
    return policy.slow_call.enabled and timeout > 0 and policy.slow_call.threshold_ms >= timeout


def _limit_values(client: Mapping[str, Any]) -> list[tuple[str, int | None]]:
    """``(key, value)`` of each limit ``client`` sets, in the dict's order (None: not a whole number >= 0)."""
    values: list[tuple[str, int | None]] = []
    for key, raw in client.items():
        if key in TIMEOUT_KEYS or key in QUEUE_KEYS:
            number = _as_int(raw)
            values.append((key, number if number is not None and number >= 0 else None))
    return values


def check_topic_policy(policy: TopicPolicy, limits: ClientLimits, source: Source, prefix: KeyPath) -> list[Translated]:
    """Issues where ``policy`` (at ``prefix``: ``defaults`` or ``topics.<key>``) contradicts ``client``."""
    issues: list[Translated] = []
    threshold = policy.slow_call.threshold_ms
    timeout = limits.message_timeout_ms
    if slow_call_out_of_reach(policy, limits):
        relative: KeyPath = ("slow_call", "threshold_ms")
        issues.append(
            Translated(
                relative,
                "slow_above_timeout",
                source.issue(
                    (*prefix, *relative),
                    expected=f"a value below {limits.timeout_key} = {timeout}",
                    found=describe(threshold),
                    message="slow-call threshold at or above the message timeout: messages time out "
                    f"before they could count as slow (lower it, or raise {_TIMEOUT_PATH})",
                ),
            )
        )
    minimum = policy.congestion.min_messages
    if policy.congestion.enabled and minimum > limits.queue_max_messages:
        relative = ("congestion", "min_messages")
        issues.append(
            Translated(
                relative,
                "congestion_above_queue",
                source.issue(
                    (*prefix, *relative),
                    expected=f"a value <= {limits.queue_key} = {limits.queue_max_messages}",
                    found=describe(minimum),
                    message="congestion could never trigger: one partition cannot hold more than the whole queue",
                ),
            )
        )
    return issues


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None
