"""KIP-345 static membership: a stable ``group.instance.id``, its uniqueness, the session timeout, fencing.

A static member that restarts within ``session.timeout.ms`` gets its partitions back without a rebalance:
the coordinator recognises the ``group.instance.id`` and hands the new member id the old assignment, so the
other members keep consuming. That works only if

- the id is **stable** across restarts of the same logical consumer (pod name, Spark executor, hostname),
- it is **unique** in the group: a second process with the same id fences the first, whose next call fails
  with the fatal ``FENCED_INSTANCE_ID`` (error 82),
- the session timeout **covers a restart**, but no more than needed: a consumer that really died keeps its
  partitions unconsumed for the whole timeout.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mutepro.errors import ConfigError

INSTANCE_ID_ENV = "MUTEPRO_GROUP_INSTANCE_ID"
#: Kafka validates group.instance.id like a topic name: at most 249 of ``[a-zA-Z0-9._-]``.
MAX_INSTANCE_ID_LENGTH = 249
FENCED_INSTANCE_ID_CODE = 82
#: Broker defaults of group.min.session.timeout.ms / group.max.session.timeout.ms.
BROKER_MIN_SESSION_TIMEOUT_MS = 6_000
BROKER_MAX_SESSION_TIMEOUT_MS = 1_800_000
DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000

_ILLEGAL = re.compile(r"[^a-zA-Z0-9._-]+")


@dataclass(frozen=True)
class InstanceId:
    """A ``group.instance.id`` and where it came from."""

    value: str
    source: str

    def __str__(self) -> str:
        return self.value


def sanitize_instance_id(raw: str) -> str:
    """Make ``raw`` a legal ``group.instance.id``: illegal runs become ``-``, at most 249 characters.

    ``"worker 7/eu@west"`` → ``"worker-7-eu-west"``. A too-long id keeps its first 240 characters plus 8 hex
    digits of its SHA-256, so two long ids differing only at the end stay distinct.
    """
    cleaned = _ILLEGAL.sub("-", raw.strip()).strip("-")
    if cleaned in ("", ".", ".."):
        raise ConfigError(f"group.instance.id: {raw!r} has no usable characters; use [a-zA-Z0-9._-]")
    if len(cleaned) > MAX_INSTANCE_ID_LENGTH:
        digest = hashlib.sha256(cleaned.encode()).hexdigest()[:8]
        cleaned = f"{cleaned[: MAX_INSTANCE_ID_LENGTH - 9]}-{digest}"
    return cleaned


def _spark_task_context() -> Any | None:
    try:
        from pyspark import TaskContext
    except ImportError:
        return None
    return TaskContext.get()


def derive_instance_id(
    explicit: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    hostname: Callable[[], str] = socket.gethostname,
    task_context: Callable[[], Any | None] = _spark_task_context,
    suffix: str | None = None,
) -> InstanceId:
    """Derive a stable ``group.instance.id``; first match wins.

    1. ``explicit``;
    2. ``$MUTEPRO_GROUP_INSTANCE_ID``;
    3. in Kubernetes (``KUBERNETES_SERVICE_HOST`` set): ``$POD_NAME`` (downward API), else ``$HOSTNAME``,
       which Kubernetes sets to the pod name — stable for StatefulSet pods (``consumer-0``), *not* for
       Deployment pods, whose names change on every restart;
    4. Spark: ``$SPARK_EXECUTOR_ID`` (``spark-exec-3``), else the task's partition id
       (``spark-part-3``: the same Kafka partition range is read by the same task index after a retry);
    5. the hostname.

    ``suffix`` distinguishes several consumers of the same group in one process (``host-1``, ``host-2``).
    """
    env = os.environ if env is None else env

    def done(raw: str, source: str) -> InstanceId:
        value = f"{raw}-{suffix}" if suffix else raw
        return InstanceId(sanitize_instance_id(value), source)

    if explicit:
        return done(explicit, "explicit")
    if env.get(INSTANCE_ID_ENV, "").strip():
        return done(env[INSTANCE_ID_ENV], f"env {INSTANCE_ID_ENV}")
    if env.get("KUBERNETES_SERVICE_HOST"):
        for var in ("POD_NAME", "HOSTNAME"):
            if env.get(var, "").strip():
                return done(env[var], f"kubernetes env {var}")
    if env.get("SPARK_EXECUTOR_ID", "").strip():
        return done(f"spark-exec-{env['SPARK_EXECUTOR_ID']}", "env SPARK_EXECUTOR_ID")
    ctx = task_context()
    if ctx is not None:
        return done(f"spark-part-{ctx.partitionId()}", "pyspark TaskContext.partitionId()")
    return done(hostname(), "hostname")


def group_instance_id(explicit: str | None = None, **kwargs: Any) -> str:
    """The derived ``group.instance.id`` string (see :func:`derive_instance_id`)."""
    return derive_instance_id(explicit, **kwargs).value


# -- uniqueness -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberInfo:
    """The identity of one group member, as ``describe_consumer_groups`` reports it."""

    member_id: str
    group_instance_id: str | None
    client_id: str = ""
    host: str = ""


@dataclass(frozen=True)
class UniquenessReport:
    """Who in the group already uses ``instance_id`` (and any id used twice among current members)."""

    group_id: str
    instance_id: str
    holders: tuple[MemberInfo, ...]
    duplicated_ids: tuple[str, ...] = ()

    @property
    def unique(self) -> bool:
        """True when no current member holds ``instance_id`` and no id is held twice."""
        return not self.holders and not self.duplicated_ids

    def explain(self) -> str:
        """A sentence for logs and the CLI."""
        if self.unique:
            return f"group.instance.id {self.instance_id!r} is free in group {self.group_id!r}"
        parts = []
        if self.holders:
            who = ", ".join(f"{m.member_id} on {m.host or '?'}" for m in self.holders)
            parts.append(
                f"group.instance.id {self.instance_id!r} is already used in group {self.group_id!r} by "
                f"{who}: joining with it fences that member (FENCED_INSTANCE_ID) unless it is this "
                "process's previous incarnation"
            )
        if self.duplicated_ids:
            parts.append(f"ids held by more than one member: {list(self.duplicated_ids)}")
        return "; ".join(parts)


def find_conflicts(
    group_id: str, instance_id: str, members: Iterable[MemberInfo], *, own_member_id: str | None = None
) -> UniquenessReport:
    """Check ``instance_id`` against ``members``; ``own_member_id`` is this process, not a conflict."""
    members = list(members)
    holders = tuple(m for m in members if m.group_instance_id == instance_id and m.member_id != (own_member_id or ""))
    seen: dict[str, int] = {}
    for m in members:
        if m.group_instance_id:
            seen[m.group_instance_id] = seen.get(m.group_instance_id, 0) + 1
    duplicated = tuple(sorted(i for i, n in seen.items() if n > 1))
    return UniquenessReport(group_id, instance_id, holders, duplicated)


def check_instance_id_unique(
    admin: Any,
    group_id: str,
    instance_id: str,
    *,
    own_member_id: str | None = None,
    timeout_s: float = 15.0,
) -> UniquenessReport:
    """Describe ``group_id`` and check ``instance_id`` against its current members."""
    desc = describe_group(admin, group_id, timeout_s=timeout_s)
    members = [MemberInfo(m.member_id, m.group_instance_id, m.client_id or "", m.host or "") for m in desc.members]
    return find_conflicts(group_id, instance_id, members, own_member_id=own_member_id)


#: The group's coordinator moved (the leader of its __consumer_offsets partition changed) or is still loading:
#: the client finds the new one and the same request succeeds a moment later.
_COORDINATOR_MOVED = frozenset({"NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS"})


def describe_group(admin: Any, group_id: str, *, timeout_s: float = 15.0) -> Any:
    """``describe_consumer_groups`` for one group, retried (within ``timeout_s``) while its coordinator moves.

    Raises :class:`~mutepro.errors.ClusterError` (with the original KafkaError) for anything else or at the end.
    """
    import time

    from confluent_kafka import KafkaException

    from mutepro.errors import ClusterError

    deadline = time.monotonic() + timeout_s
    while True:
        left = max(1.0, deadline - time.monotonic())
        try:
            return admin.describe_consumer_groups([group_id], request_timeout=left)[group_id].result(timeout=left + 5)
        except KafkaException as err:
            error = err.args[0] if err.args else None
            name = error.name() if error is not None and hasattr(error, "name") else ""
            if name in _COORDINATOR_MOVED and time.monotonic() < deadline:
                time.sleep(0.2)  # the new coordinator is found by the client's own metadata refresh
                continue
            raise ClusterError(f"describe_consumer_groups({group_id!r}) failed: {err}", kafka_error=error) from err


# -- session timeout --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionTimeoutAdvice:
    """A ``session.timeout.ms`` / ``heartbeat.interval.ms`` pair and the reasoning behind it."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    reasoning: tuple[str, ...]

    def config(self) -> dict[str, int]:
        """The consumer settings to apply."""
        return {
            "session.timeout.ms": self.session_timeout_ms,
            "heartbeat.interval.ms": self.heartbeat_interval_ms,
        }


def recommend_session_timeout_ms(
    restart_seconds: float,
    *,
    safety_factor: float = 1.5,
    broker_min_ms: int = BROKER_MIN_SESSION_TIMEOUT_MS,
    broker_max_ms: int = BROKER_MAX_SESSION_TIMEOUT_MS,
) -> SessionTimeoutAdvice:
    """Recommend a session timeout that covers a restart taking ``restart_seconds`` (its p99).

    Worked example: a pod restarts in 40 s at p99. ``40 s x 1.5 = 60 s`` leaves room for a slow image pull
    without a rebalance; rounded up to whole seconds, 60000 ms. The cost: a consumer that truly died holds
    its partitions for up to 60 s before they move. Heartbeats stay at librdkafka's 3 s unless that is more
    than a third of the timeout (Kafka's rule of thumb: two may be lost). The value is clamped to the
    brokers' ``group.min/max.session.timeout.ms`` (6 s to 30 min by default), which reject anything outside.
    """
    if restart_seconds < 0 or math.isnan(restart_seconds):
        raise ConfigError(f"restart_seconds must be >= 0 (got {restart_seconds}); pass the restart time's p99")
    if safety_factor < 1.0:
        raise ConfigError(f"safety_factor must be >= 1.0 (got {safety_factor}); below 1 a restart rebalances")
    wanted = math.ceil(restart_seconds * safety_factor) * 1000
    reasoning = [
        f"restart p99 {restart_seconds:g} s x safety {safety_factor:g} = {wanted} ms: a restart inside it "
        "rejoins with the same group.instance.id and no rebalance",
    ]
    value = wanted
    if value < broker_min_ms:
        value = broker_min_ms
        reasoning.append(f"raised to the brokers' group.min.session.timeout.ms ({broker_min_ms} ms)")
    if value > broker_max_ms:
        value = broker_max_ms
        reasoning.append(
            f"capped at the brokers' group.max.session.timeout.ms ({broker_max_ms} ms); restarts longer than "
            "that will rebalance unless the brokers' limit is raised"
        )
    # librdkafka's default heartbeat (3 s) is fine while it stays under a third of the timeout, which lets
    # two heartbeats be lost before the coordinator gives up: 6000 ms -> 2000 ms, 60000 ms -> 3000 ms.
    heartbeat = min(DEFAULT_HEARTBEAT_INTERVAL_MS, value // 3)
    reasoning.append(f"heartbeat.interval.ms = {heartbeat} (at most a third of the timeout)")
    reasoning.append(
        f"trade-off: a consumer that really died leaves its partitions unread for up to {value / 1000:g} s"
    )
    return SessionTimeoutAdvice(value, heartbeat, tuple(reasoning))


# -- fencing ----------------------------------------------------------------------------------------------


def _error_code(error: Any) -> int | None:
    if isinstance(error, int):
        return error
    if hasattr(error, "code") and callable(error.code):
        return int(error.code())
    args = getattr(error, "args", ())
    if args and hasattr(args[0], "code"):
        return _error_code(args[0])
    return None


def is_fenced(error: Any) -> bool:
    """True for a ``KafkaError``/``KafkaException``/code that is ``FENCED_INSTANCE_ID``."""
    return _error_code(error) == FENCED_INSTANCE_ID_CODE


def explain_fenced(error: Any, *, instance_id: str | None = None) -> str | None:
    """Explain ``FENCED_INSTANCE_ID`` in operator terms; ``None`` for any other error."""
    if not is_fenced(error):
        return None
    who = f"group.instance.id {instance_id!r}" if instance_id else "this consumer's group.instance.id"
    return (
        f"FENCED_INSTANCE_ID (82): another consumer joined the group with {who}, so the coordinator handed "
        "it this member's partitions and fenced this one. The error is fatal: close this consumer and do "
        "not reuse it. Usual causes: two processes derive the same id (e.g. a Deployment where two pods "
        "share a name pattern, or two consumers in one process without a suffix), or an old instance kept "
        "running after its replacement started. Make the id unique per process (mutepro's "
        "derive_instance_id(suffix=...), check_instance_id_unique) and make sure the old instance is "
        "stopped before the new one starts."
    )
