"""The policy schema: frozen pydantic v2 models, one per YAML section, strict and closed (``extra="forbid"``).

Strict mode is deliberate: in a config file ``threshold_ms: "500"`` or ``enabled: 1`` is almost always a slip,
and lax mode would silently turn ``true`` into ``1``. Values that come from ``${ENV}`` interpolation are
re-typed by :mod:`mutepro.policy.interpolate` before they reach these models, so ``${SLOW_MS:-500}`` still
validates as an int.

Cross-field rules (``minimum_calls <= window.size`` for count windows, ``max_retry_interval_ms >=
retry_interval_ms``, ``url`` required for redis) raise :class:`PydanticCustomError` with ``ctx["field"]``
naming the offending field, so the loader can point at ``...failure_rate.minimum_calls`` rather than at the
whole section. ``hide_input_in_errors`` keeps values (a Redis URL with a password, say) out of
``ValidationError`` text when the models are built from code.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from mutepro.detect.window import MAX_COUNT_WINDOW, MAX_TIME_WINDOW_S
from mutepro.policy.redact import redact_client, redact_url


class KeyedPolicy(StrEnum):
    """What happens to a keyed message whose partition is muted (``keyed_policy:``).

    A ``str`` enum: a policy file's ``hold`` validates to ``KeyedPolicy.HOLD``, which still equals ``"hold"`` and
    dumps back to it in YAML/JSON.
    """

    REROUTE = "reroute"
    HOLD = "hold"
    FAIL = "fail"
    IGNORE = "ignore"


#: The models are strict (no "1" for 1); an enum field still takes its values as the plain strings a file holds,
#: and dumps them back as plain strings (``yaml.safe_dump(policy.model_dump())`` keeps working). The JSON Schema
#: shows the choices inline, as editors expect, not as a $defs entry carrying this docstring.
KeyedPolicyName = Annotated[
    KeyedPolicy,
    Field(strict=False),
    PlainSerializer(lambda k: k.value, return_type=str),
    WithJsonSchema({"enum": [k.value for k in KeyedPolicy], "type": "string"}),
]
WindowType = Literal["count", "time"]

#: librdkafka's default ``message.timeout.ms`` (5 minutes): a delivery that takes longer has failed anyway.
DEFAULT_MESSAGE_TIMEOUT_MS = 300_000
#: librdkafka's default ``queue.buffering.max.messages``.
DEFAULT_QUEUE_MAX_MESSAGES = 100_000
#: librdkafka's default ``queue.buffering.max.kbytes`` (1 GB).
DEFAULT_QUEUE_MAX_KBYTES = 1_048_576


def cross_field_error(field: str, expected: str, found: str, message: str) -> PydanticCustomError:
    """An error about ``field`` that depends on another field; the loader appends ``field`` to the path."""
    return PydanticCustomError("cross_field", message, {"field": field, "expected": expected, "found": found})


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, hide_input_in_errors=True)


class HoldConfig(_Model):
    """``keyed_policy: hold``: keyed messages for a muted partition wait in memory until it unmutes."""

    max_messages: int = Field(
        default=10_000,
        ge=1,
        le=10_000_000,
        description="Messages held per muted partition (at most 10,000,000); beyond this produce() raises "
        "BufferError.",
    )


class WindowConfig(_Model):
    """A resilience4j-style sliding window: the last ``size`` calls (count) or seconds (time)."""

    type: WindowType = Field(default="count", description="count: the last N calls; time: the last N seconds.")
    size: int = Field(
        default=100,
        ge=1,
        le=MAX_COUNT_WINDOW,
        description=f"Calls (count window, at most {MAX_COUNT_WINDOW:,}) or seconds (time window, at most "
        f"{MAX_TIME_WINDOW_S}). Memory grows with it, per partition.",
    )

    @model_validator(mode="after")
    def _time_window_bound(self) -> WindowConfig:
        # The count bound is the field's le=; a time window allocates a bucket per second, so its bound is lower.
        if self.type == "time" and self.size > MAX_TIME_WINDOW_S:
            raise cross_field_error(
                "size",
                expected=f"a value <= {MAX_TIME_WINDOW_S} (seconds) for a time window",
                found=str(self.size),
                message="window.size is too large for a time window (one bucket per second, per partition)",
            )
        return self


def _check_minimum_calls(minimum_calls: int, window: WindowConfig) -> None:
    # With a count window of 100 calls and minimum_calls 150 the window can never hold enough calls, so the
    # detector could never trip: almost certainly a typo, so refuse it instead of silently never muting.
    if window.type == "count" and minimum_calls > window.size:
        raise cross_field_error(
            "minimum_calls",
            expected=f"<= window.size ({window.size}) for a count window",
            found=str(minimum_calls),
            message="minimum_calls exceeds the count window's size, so the detector could never trip",
        )


class FailureRateConfig(_Model):
    """KIP-693's failure-rate breaker: mute once ``threshold_pct`` of recent deliveries failed."""

    enabled: bool = True
    window: WindowConfig = Field(default_factory=lambda: WindowConfig(type="count", size=100))
    minimum_calls: int = Field(
        default=20,
        ge=1,
        description="KIP-693 trigger.message.count: calls needed in the window before judging.",
    )
    threshold_pct: float = Field(
        default=50.0, gt=0, le=100, description="KIP-693 trigger.failure.perc: failed deliveries, percent."
    )

    @model_validator(mode="after")
    def _minimum_fits_window(self) -> FailureRateConfig:
        _check_minimum_calls(self.minimum_calls, self.window)
        return self


class SlowCallConfig(_Model):
    """Mute once ``rate_threshold_pct`` of recent deliveries took longer than ``threshold_ms``."""

    enabled: bool = True
    threshold_ms: int = Field(
        default=1000,
        ge=1,
        description="A delivery slower than this, or a message undelivered for longer, is slow.",
    )
    rate_threshold_pct: float = Field(default=50.0, gt=0, le=100, description="Slow deliveries, percent.")
    window: WindowConfig = Field(default_factory=lambda: WindowConfig(type="time", size=10))
    minimum_calls: int = Field(default=10, ge=1, description="Calls needed in the window before judging.")
    outlier_factor: float = Field(
        default=5.0,
        ge=1.0,
        description="Also slow: a partition whose oldest undelivered message is older than this many times the "
        "median of the topic's other active partitions (and than outlier_min_ms). 1 turns the rule off.",
    )
    outlier_min_ms: int = Field(
        default=400,
        ge=1,
        description="The outlier rule's mute floor: a partition is muted as an outlier only when its oldest "
        "undelivered message is older than this and its leader stood out past it before (within "
        "outlier_recur_ms) or for outlier_episode_ms on end.",
    )
    outlier_recur_ms: int = Field(
        default=5000,
        ge=0,
        le=600_000,
        description="How close two deep outlier episodes of one leader must be to count as one fault: a leader "
        "standing out past outlier_min_ms again within this long of its last such episode's end is muted. A "
        "limping broker's stops recur every period (2 s of every 4 s: episodes 2 s apart); a healthy broker's "
        "pauses (GC, log roll) are further apart. 0: a second episode never mutes (only outlier_episode_ms does).",
    )
    outlier_episode_ms: int = Field(
        default=1500,
        ge=1,
        le=600_000,
        description="An outlier episode lasting this long mutes its leader's standing-out partitions on its own "
        "(a broker slow all the time): longer than a healthy broker's pauses (0.9 s the longest seen locally).",
    )
    cold_start_ms: int = Field(
        default=5000,
        ge=0,
        le=600_000,
        description="How long a partition's first messages (before any of its deliveries was judged) may wait "
        "for the broker to create its log and for a connection before their age alone counts against it, while "
        "its leader has delivered none of the topic's messages; a stall within it still counts when the leader "
        "has delivered before (any partition) and no partition of it delivered meanwhile.",
    )
    normal_window_ms: int = Field(
        default=10_000,
        ge=1000,
        le=60_000,
        description="How far back what counts as a normal wait looks: a partition is slow only when its oldest "
        "undelivered message has waited outlier_factor times longer than the better-served quarter of the "
        "topic's partitions waited while it did (over at most this window). A cluster that was slow everywhere "
        "within it mutes nothing for the same slowness now.",
    )
    avoid_min_ms: int = Field(
        default=150,
        ge=1,
        description="The outlier rule's steering floor: a leader whose partitions' oldest undelivered message is "
        "an outlier older than this is avoided by unkeyed messages until they are delivered (no mute). "
        "Values above outlier_min_ms act as outlier_min_ms.",
    )

    @model_validator(mode="after")
    def _minimum_fits_window(self) -> SlowCallConfig:
        _check_minimum_calls(self.minimum_calls, self.window)
        return self


class CongestionConfig(_Model):
    """KIP-693's "mute when in-flight is full", generalised to librdkafka's one global queue."""

    enabled: bool = True
    max_buffer_share_pct: float = Field(
        default=25.0,
        gt=0,
        le=100,
        description="Most of queue.buffering.max.messages/kbytes one partition may hold before it is muted. "
        "Well above a fair share (12 partitions: 8.3 %), so a busy partition of a saturated producer is not "
        "taken for a congested one; stalls are caught earlier by slow_call anyway.",
    )
    min_messages: int = Field(
        default=1000, ge=0, description="Never mute for congestion below this many outstanding messages."
    )
    min_age_ms: int = Field(
        default=1000,
        ge=0,
        description="...and only while its oldest outstanding message is at least this old: a partition that "
        "drains (a fast producer's sticky partition holds thousands of fresh messages) is not congested, and "
        "neither is a healthy broker's pause under a saturating producer (0.2-0.9 s seen, on a loaded machine: "
        "with 200 ms such pauses muted healthy partitions holding 26-27 % of the queue). The slow-call outlier "
        "rule steers around such pauses and mutes what stays slow.",
    )
    outlier_factor: float = Field(
        default=3.0,
        ge=1.0,
        description="...and only while it holds more than this factor times the median of the topic's other "
        "(unmuted) partitions: a producer that fills the buffer evenly is not a congested partition. "
        "1 turns this check off (the buffer share alone decides).",
    )


class BrokerConfig(_Model):
    """Broker-level muting: mute every partition a broker leads once it is evidently the problem."""

    enabled: bool = True
    min_bad_partitions: int = Field(
        default=2, ge=1, description="Muted partitions led by one broker before the whole broker is muted."
    )
    min_bad_pct: float = Field(
        default=25.0,
        ge=0,
        le=100,
        description="...and at least this percentage of the partitions it leads that the producer writes to: "
        "2 of 4 is evidence against a broker, 2 of 400 is not (0: min_bad_partitions alone decides). A silent "
        "broker, one that delivered nothing within slow_call.threshold_ms, needs min_bad_partitions alone.",
    )
    latency_factor: float = Field(
        default=5.0,
        gt=1,
        description="Slow broker: rtt p99 above this factor times the other brokers' median.",
    )
    min_latency_ms: int = Field(
        default=500,
        ge=0,
        description="...and above this absolute floor (500: a saturating writer on a loaded machine saw a healthy "
        "broker at 295 ms for two emissions; a broker stopped 80 % of every second shows ~800 ms).",
    )
    latency_snapshots: int = Field(
        default=2,
        ge=1,
        description="...in this many librdkafka statistics emissions in a row (statistics.interval.ms apart): "
        "one second's p99 can be a hiccup.",
    )
    down_grace_ms: int = Field(
        default=2000,
        ge=0,
        le=3_600_000,
        description="A broker librdkafka's statistics show down (not UP) for this long while it leads a partition "
        "the producer writes is muted whole: longer than a reconnect after an idle connection was closed.",
    )
    latency_hold_ms: int = Field(
        default=5000,
        ge=0,
        le=3_600_000,
        description="A broker muted for its latency stays muted this long after its last slow emission (muted, it "
        "gets no traffic and its rtt says nothing more); doubled each time it is caught again within the hold.",
    )
    latency_max_hold_ms: int = Field(
        default=60_000,
        ge=0,
        le=3_600_000,
        description="...at most this long; a broker fine for this long starts over at latency_hold_ms.",
    )

    @model_validator(mode="after")
    def _hold_fits_max(self) -> BrokerConfig:
        if self.latency_hold_ms > self.latency_max_hold_ms:
            raise cross_field_error(
                "latency_hold_ms",
                expected=f"<= latency_max_hold_ms ({self.latency_max_hold_ms})",
                found=str(self.latency_hold_ms),
                message="latency_hold_ms exceeds latency_max_hold_ms; raise the maximum or lower the hold",
            )
        return self


class BreakerConfig(_Model):
    """How a muted partition comes back: open -> half-open after a backed-off interval, then probes."""

    retry_interval_ms: int = Field(
        default=1000,
        ge=1,
        le=86_400_000,
        description="KIP-693 mute.retry.interval: open -> half-open after this long (at most a day). Probing is "
        "cheap (one message, which waits for its broker when the probe fails), so it starts soon.",
    )
    max_retry_interval_ms: int = Field(
        default=4000, ge=1, le=86_400_000,
        description="Cap of the backed-off retry interval (at most a day; left out, at least retry_interval_ms): "
        "once a fault ends, the partition is probed again within this long and unmuted once half_open_probes "
        "probes passed (~1 s more at the default spacing), so about 5 s after the fault at the defaults.",
    )
    backoff_multiplier: float = Field(default=2.0, ge=1, description="Retry interval growth after each failed probe.")
    half_open_probes: int = Field(
        default=5, ge=1, le=10_000, description="Probe messages that must succeed to unmute (at most 10,000)."
    )
    probe_spacing_ms: int = Field(
        default=250, ge=0, le=60_000,
        description="Least time between two probes of one partition, so that the probes sample it over time "
        "(0: all at once).",
    )

    @model_validator(mode="after")
    def _cap_above_start(self) -> BreakerConfig:
        # A cap left at its default follows a longer first wait (retry_interval_ms: 60000 alone means "wait a
        # minute", not an error about a cap nobody wrote); a cap written below the first wait is refused: 5000 ms
        # doubling up to a 2000 ms cap would make the "cap" shorten the very first wait.
        if "max_retry_interval_ms" not in self.model_fields_set and self.max_retry_interval_ms < self.retry_interval_ms:
            object.__setattr__(self, "max_retry_interval_ms", self.retry_interval_ms)
        if self.max_retry_interval_ms < self.retry_interval_ms:
            raise cross_field_error(
                "max_retry_interval_ms",
                expected=f">= retry_interval_ms ({self.retry_interval_ms})",
                found=str(self.max_retry_interval_ms),
                message="the backoff cap is below the first retry interval",
            )
        return self


class PartitionerConfig(_Model):
    """Unkeyed partition choice: sticky batches (KIP-480), weighted away from filling partitions (KIP-794)."""

    sticky_bytes: int | None = Field(
        default=None,
        ge=1,
        description="Value bytes sent to one partition before switching (the switch also happens after "
        "sticky.partitioning.linger.ms). Default: no byte limit, only the time, as librdkafka's own sticky "
        "partitioner, so batches are as large as the plain client's; Java's KIP-480 switches after 16384.",
    )
    adaptive: bool = Field(default=True, description="Weight partitions by how little they have outstanding.")
    rack_aware: bool = Field(
        default=False,
        description="Rack-aware partitioning (KIP-1123): unkeyed messages go to writable partitions whose leader is "
        "in the producer's rack (the client config's client.rack), weighted among themselves, and to every writable "
        "partition when none of those is writable. Keyed messages and explicit partitions are never affected. The "
        "client config's partitioner.rack.aware=true (Java's name) turns it on for every topic.",
    )


class RescueConfig(_Model):
    """Rescue: messages stuck on a partition that gets muted are re-sent elsewhere (unkeyed ones)."""

    enabled: bool = True
    after_ms: int = Field(
        default=1000,
        ge=0,
        description="How long a newly muted partition's queued messages may wait for their broker before a rescue "
        "takes them back. A rescue purges and re-sends every queued message of the producer (librdkafka's purge "
        "is producer-wide), holding produce() while it runs, so a pause that ends sooner (a GC pause) drains by "
        "itself and costs nothing; 0 rescues at the mute.",
    )
    min_share_pct: int = Field(
        default=10,
        ge=0,
        le=100,
        description="A rescue takes every queued message back to move the stuck ones, so it runs only while the "
        "muted partitions' stuck messages are at least this share of everything queued: a few messages stuck "
        "behind a broker's hiccup, among a full queue over a wide topic, are not worth re-sending the whole queue "
        "(they wait for their broker, or for the rescue once the rest has drained); 0: always.",
    )
    blocked_share_pct: int | None = Field(
        default=90,
        ge=1,
        le=100,
        description="No waiting for after_ms while the application is blocked on the muted partitions: its "
        "produce() met a full queue (BufferError) since the mute and their stuck messages are at least this share "
        "of everything queued. Waiting then frees nothing the application could use and costs it all its "
        "throughput (a saturated writer, one broker of three stalled: 0 msg/s for that second). null: always "
        "wait after_ms.",
    )
    header: str | None = Field(
        default="x-mutepro-rescued-from",
        min_length=1,
        description="Header added to rescued messages, naming the original partition; null disables.",
    )


class TopicPolicy(_Model):
    """Everything mutepro decides per topic; ``defaults`` is one, ``topics.<name>`` override parts of it."""

    keyed_policy: KeyedPolicyName = Field(
        default=KeyedPolicy.REROUTE,
        title="Keyed Policy",
        description="What happens to a keyed message whose partition is muted: reroute it to another "
        "partition, hold it until the partition unmutes, fail it (a _STATE KafkaError naming the partition), "
        "or ignore the mute.",
    )
    hold: HoldConfig = Field(default_factory=lambda: HoldConfig())
    failure_rate: FailureRateConfig = Field(default_factory=lambda: FailureRateConfig())
    slow_call: SlowCallConfig = Field(default_factory=lambda: SlowCallConfig())
    congestion: CongestionConfig = Field(default_factory=lambda: CongestionConfig())
    broker: BrokerConfig = Field(default_factory=lambda: BrokerConfig())
    breaker: BreakerConfig = Field(default_factory=lambda: BreakerConfig())
    partitioner: PartitionerConfig = Field(default_factory=lambda: PartitionerConfig())
    rescue: RescueConfig = Field(default_factory=lambda: RescueConfig())


_REDIS_SCHEMES = ("redis", "rediss", "unix")


class StateConfig(_Model):
    """Where mute state lives: in this process, or in Redis, shared by several producers (executors)."""

    backend: Literal["memory", "redis"] = "memory"
    url: str | None = Field(
        default=None,
        description="redis://[:password@]host:port/db (required for the redis backend); may use ${...}.",
    )
    key_prefix: str = Field(default="mutepro", min_length=1, description="Prefix of every Redis key mutepro writes.")

    @field_validator("url")
    @classmethod
    def _redis_url(cls, url: str | None) -> str | None:
        if url is not None and urlsplit(url).scheme not in _REDIS_SCHEMES:
            raise PydanticCustomError(
                "url_scheme", "expected a redis://, rediss:// or unix:// URL", {"expected": "a redis:// URL"}
            )
        return url

    @model_validator(mode="after")
    def _url_for_redis(self) -> StateConfig:
        if self.backend == "redis" and self.url is None:
            raise cross_field_error(
                "url",
                expected="a redis:// URL when backend is redis",
                found="nothing",
                message="the redis backend needs a url",
            )
        return self

    def __repr_args__(self) -> Any:
        # The URL may carry a password (redis://:hunter2@host): never let repr()/str() show it.
        for name, value in super().__repr_args__():
            yield name, (redact_url(value) if name == "url" and isinstance(value, str) else value)


class LoggingConfig(_Model):
    """mutepro's own logging (the CLI's ``--log-level``/``--log-format``; the library itself logs through the
    stdlib ``mutepro.*`` loggers and is silent unless the application configures logging)."""

    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["console", "json"] = "console"


_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def _metric_namespace(value: str) -> str:
    if not _METRIC_NAME.match(value):
        raise PydanticCustomError(
            "metric_namespace",
            "not a valid Prometheus metric name prefix",
            {"expected": "letters, digits, '_' or ':' (not starting with a digit)"},
        )
    return value


class MetricsConfig(_Model):
    """Prometheus metrics."""

    prometheus_port: int | None = Field(
        default=None, ge=1, le=65_535, description="Port to serve /metrics on, or null for none."
    )
    namespace: Annotated[str, AfterValidator(_metric_namespace)] = "mutepro"


def _client_value(value: Any) -> Any:
    # librdkafka takes strings, and confluent-kafka converts ints, floats and bools; a list or a nested
    # mapping (usually a mis-indented block) would be rejected by librdkafka much later, at Producer
    # construction.
    if isinstance(value, str | int | float | bool):
        return value
    raise PydanticCustomError(
        "client_value", "librdkafka settings are scalars", {"expected": "a string, number or boolean"}
    )


ClientValue = Annotated[
    Any,
    AfterValidator(_client_value),
    WithJsonSchema({"type": ["string", "integer", "number", "boolean"]}),
]


class PolicyDocument(_Model):
    """A whole policy file (or several merged): validated as written, before topic overrides are applied.

    ``topics`` holds the raw partial overrides; the loader merges each over ``defaults`` and validates the
    result as a :class:`TopicPolicy` (a partial override cannot be checked for consistency on its own).
    """

    version: Literal[1] = Field(default=1, description="Schema version; must be 1.")
    client: dict[str, ClientValue] = Field(
        default_factory=dict,
        description="librdkafka settings, passed to the producer as written (dotted keys).",
    )
    defaults: TopicPolicy = Field(default_factory=lambda: TopicPolicy())
    topics: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per-topic overrides, deep-merged over defaults. Keys: exact topic names, glob patterns "
        "(metrics.*), or re:<regex>. Exact names win, then patterns in file order.",
    )
    state: StateConfig = Field(default_factory=lambda: StateConfig())
    logging: LoggingConfig = Field(default_factory=lambda: LoggingConfig())
    metrics: MetricsConfig = Field(default_factory=lambda: MetricsConfig())

    def __repr_args__(self) -> Any:
        # client holds sasl.password and friends: repr()/str() show them as ***.
        for name, value in super().__repr_args__():
            yield name, (redact_client(value) if name == "client" and isinstance(value, dict) else value)
