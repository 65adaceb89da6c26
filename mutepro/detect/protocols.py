"""Plug-in points for custom detectors: implement these Protocols and hand the objects to the mute manager."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from mutepro.detect.model import Delivery, PartitionLoad, Verdict
from mutepro.detect.stats import StatsSnapshot


@runtime_checkable
class PartitionDetector(Protocol):
    """Judges one partition. One instance per partition, so it may keep per-partition state (a window).

    A detector that also implements :class:`BulkPartitionDetector` (``record_many``) gets a tick's tally at once;
    one without it gets one :meth:`record` call per report instead; every built-in detector has it.
    """

    name: str

    def record(self, delivery: Delivery) -> None:
        """Take one final delivery report of this partition. Called on the poller thread; keep it O(1)."""
        ...

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        """Return a verdict if the partition should be muted now, else None. Keep it O(1) or O(log n)."""
        ...

    def reset(self) -> None:
        """Forget the past: called when the partition is unmuted so it starts with a fresh window."""
        ...


@runtime_checkable
class BulkPartitionDetector(PartitionDetector, Protocol):
    """A :class:`PartitionDetector` that takes a tick's tally of reports at once: the producer counts reports per
    partition with plain integers and hands them over every tick (50 ms); ``slow`` of them were slower than the
    topic's ``slow_call.threshold_ms``."""

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None:
        """Take ``calls`` final reports of this partition at once, ``failures`` of them failed."""
        ...


@runtime_checkable
class BrokerHealthDetector(Protocol):
    """Judges brokers as a whole (one instance per producer); see
    :class:`mutepro.detect.broker.BrokerDetector`."""

    def evaluate(
        self,
        stats: StatsSnapshot | None,
        bad_partitions_by_leader: Mapping[int, int],
        now: float,
        shown_by_leader: Mapping[int, int] | None = None,
    ) -> dict[int, Verdict]:
        """Return broker id -> why all its partitions should be muted (``shown_by_leader``: per broker, how many
        partitions its share of bad partitions is of, see :func:`mutepro.mute.brokers.shown_by_leader`)."""
        ...
