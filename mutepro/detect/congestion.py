"""Congestion: KIP-693's "mute when in-flight is full", generalised to a share of the producer's buffer."""

from __future__ import annotations

from mutepro.detect.failure_rate import check_minimum, check_rate
from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict


class CongestionDetector:
    """Trips when one partition holds more than ``max_share`` of the producer's buffer (messages or bytes).

    librdkafka's queue limits are global per producer: one partition whose leader drains slowly fills the
    whole buffer and every other partition gets ``BufferError: Local: Queue full``. Muting it at, say,
    ``max_share=0.25`` of ``queue.buffering.max.messages=100000`` (25,000 outstanding) keeps 75 % for the
    healthy partitions. ``min_messages`` keeps tiny buffers from tripping on a handful of messages.
    Comparisons are strict ("more than its share"); the detector keeps no history, so ``record`` and
    ``reset`` do nothing.
    """

    name: str = MuteReason.CONGESTION

    def __init__(self, max_share: float, min_messages: int, min_age_s: float = 0.0) -> None:
        self.max_share = check_rate("congestion.max_share", max_share)
        self.min_messages = check_minimum("congestion.min_messages", min_messages)
        if min_age_s < 0:
            from mutepro.errors import ConfigError

            raise ConfigError(f"congestion.min_age_ms: must be >= 0, got {min_age_s * 1000:g}")
        self.min_age_s = min_age_s

    def record(self, delivery: Delivery) -> None:
        """Nothing to remember: congestion is read from the live load."""

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None:
        """Nothing to remember."""

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        """Return a ``congestion`` verdict when the share of messages or bytes is over ``max_share``."""
        if load.outstanding < self.min_messages:
            return None
        # A partition that drains is not congested however much it holds: the sticky partition of a fast producer
        # holds one linger's worth of traffic (at 160,000 msg/s and linger 5 ms plus a request, ~6,000 messages)
        # whose oldest message is a few ms old. A stalled one's oldest message only gets older.
        if self.min_age_s > 0 and (load.oldest_age_s is None or load.oldest_age_s < self.min_age_s):
            return None
        msg_limit = self.max_share * load.buffer_max_messages
        byte_limit = self.max_share * load.buffer_max_bytes
        over_msgs = load.buffer_max_messages > 0 and load.outstanding > msg_limit
        over_bytes = load.buffer_max_bytes > 0 and load.outstanding_bytes > byte_limit
        if not (over_msgs or over_bytes):
            return None
        return Verdict(
            MuteReason.CONGESTION,
            {
                "outstanding": load.outstanding,
                "outstanding_bytes": load.outstanding_bytes,
                "message_share": round(load.outstanding / load.buffer_max_messages, 4)
                if load.buffer_max_messages > 0
                else 0.0,
                "byte_share": round(load.outstanding_bytes / load.buffer_max_bytes, 4)
                if load.buffer_max_bytes > 0
                else 0.0,
                "max_share_pct": round(self.max_share * 100, 2),
                "limit": "messages" if over_msgs else "bytes",
                "oldest_age_ms": round(load.oldest_age_s * 1000) if load.oldest_age_s is not None else -1,
            },
        )

    def reset(self) -> None:
        """Nothing to forget."""
