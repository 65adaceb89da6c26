"""Pure detection logic: sliding windows, per-partition detectors, broker detection and librdkafka statistics.

Nothing here does I/O or imports the rest of mutepro (except :mod:`mutepro.errors`); every method takes the
time as an argument so it can be tested without sleeping.
"""

from __future__ import annotations

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict
from mutepro.detect.protocols import BrokerHealthDetector, BulkPartitionDetector, PartitionDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.stats import BrokerStats, PartitionStats, StatsParseError, StatsSnapshot, parse_stats
from mutepro.detect.window import CountWindow, SlidingWindow, TimeWindow, WindowStats, make_window

__all__ = [
    "BrokerDetector",
    "BrokerHealthDetector",
    "BrokerStats",
    "BulkPartitionDetector",
    "CongestionDetector",
    "CountWindow",
    "Delivery",
    "FailureRateDetector",
    "MuteReason",
    "PartitionDetector",
    "PartitionLoad",
    "PartitionStats",
    "SlidingWindow",
    "SlowCallDetector",
    "StatsParseError",
    "StatsSnapshot",
    "TimeWindow",
    "Verdict",
    "WindowStats",
    "make_window",
    "parse_stats",
]
