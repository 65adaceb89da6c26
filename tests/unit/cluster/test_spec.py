"""Cluster shape (mutepro.cluster.spec), without starting Java."""

from __future__ import annotations

import pytest

from mutepro.cluster.spec import ClusterSpec, resolve_racks
from mutepro.errors import ConfigError


class TestResolveRacks:
    def test_default_is_one_rack_per_broker(self) -> None:
        """Three brokers get rack-a, rack-b and rack-c."""
        assert resolve_racks(3, None) == {1: "rack-a", 2: "rack-b", 3: "rack-c"}

    def test_six_brokers_on_three_racks_round_robin(self) -> None:
        """An int spreads brokers round-robin over that many racks."""
        assert resolve_racks(6, 3) == {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a", 5: "rack-b", 6: "rack-c"}

    def test_four_racks_by_name(self) -> None:
        """A list of names is used in order."""
        assert resolve_racks(4, ["z1", "z2", "z3", "z4"]) == {1: "z1", 2: "z2", 3: "z3", 4: "z4"}

    def test_explicit_mapping_must_cover_every_broker(self) -> None:
        """A mapping missing a broker names the missing id."""
        with pytest.raises(ConfigError, match=r"missing \[3\]"):
            resolve_racks(3, {1: "a", 2: "b"})

    def test_zero_brokers_is_rejected(self) -> None:
        """At least one broker is required, and the error names the field."""
        with pytest.raises(ConfigError, match="brokers:"):
            resolve_racks(0, None)


class TestClusterSpec:
    def test_non_loopback_host_is_rejected(self) -> None:
        """The launcher binds to loopback only."""
        with pytest.raises(ConfigError, match="host:"):
            ClusterSpec(host="10.0.0.1").validate()

    def test_port_count_must_match_brokers(self) -> None:
        """broker_ports needs one port per broker."""
        with pytest.raises(ConfigError, match="broker_ports:"):
            ClusterSpec(brokers=3, broker_ports=[9092]).validate()
