"""The detector plug-in points are typed Protocols (mutepro.detect.protocols)."""

from __future__ import annotations

import pytest

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.protocols import BrokerHealthDetector, PartitionDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.window import CountWindow


class TestProtocols:
    @pytest.mark.parametrize(
        "detector",
        [
            FailureRateDetector(CountWindow(10), 5, 0.5),
            SlowCallDetector(1.0, 0.5, CountWindow(10), 5, 5.0),
            CongestionDetector(0.5, 10),
        ],
    )
    def test_partition_detectors_satisfy_protocol(self, detector: object) -> None:
        """Every built-in partition detector is a PartitionDetector."""
        assert isinstance(detector, PartitionDetector)

    def test_broker_detector_satisfies_protocol(self) -> None:
        """BrokerDetector is a BrokerHealthDetector."""
        assert isinstance(BrokerDetector(2, 5.0, 20.0), BrokerHealthDetector)
