"""KIP-392 helpers: client.rack derivation, readiness judgement, locality from librdkafka statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mutepro.errors import ConfigError
from mutepro.racks.follower import (
    RACK_AWARE_SELECTOR,
    LocalityReport,
    StatsCollector,
    evaluate_readiness,
    load_zone_map,
    resolve_client_rack,
)

BROKER_RACKS: dict[int, str | None] = {1: "rack-a", 2: "rack-b", 3: "rack-c"}


class TestResolveClientRack:
    def test_explicit_wins(self) -> None:
        """An explicit rack beats every environment variable."""
        res = resolve_client_rack("rack-x", env={"MUTEPRO_CLIENT_RACK": "rack-y", "MUTEPRO_ZONE": "z"})
        assert (res.rack, res.source) == ("rack-x", "explicit")

    def test_env_variable(self) -> None:
        """MUTEPRO_CLIENT_RACK beats the zone."""
        res = resolve_client_rack(env={"MUTEPRO_CLIENT_RACK": " rack-y ", "AWS_AVAILABILITY_ZONE": "us-east-1a"})
        assert res.rack == "rack-y" and "MUTEPRO_CLIENT_RACK" in res.source

    def test_zone_through_map_file(self, tmp_path: Path) -> None:
        """The zone is translated by a YAML zone map named by MUTEPRO_ZONE_MAP."""
        zone_map = tmp_path / "zones.yaml"
        zone_map.write_text("zones:\n  us-east-1a: use1-az1\n  us-east-1b: use1-az2\n")
        env = {"AWS_AVAILABILITY_ZONE": "us-east-1b", "MUTEPRO_ZONE_MAP": str(zone_map)}
        res = resolve_client_rack(env=env)
        assert res.rack == "use1-az2" and "us-east-1b" in res.source

    def test_json_map_and_mutepro_zone_first(self, tmp_path: Path) -> None:
        """A flat JSON map works and MUTEPRO_ZONE is read before AWS_AVAILABILITY_ZONE."""
        zone_map = tmp_path / "zones.json"
        zone_map.write_text(json.dumps({"z1": "rack-a", "us-east-1a": "rack-b"}))
        env = {"MUTEPRO_ZONE": "z1", "AWS_AVAILABILITY_ZONE": "us-east-1a"}
        assert resolve_client_rack(env=env, zone_map=zone_map).rack == "rack-a"

    def test_unmapped_zone_is_an_error(self) -> None:
        """A zone missing from the map raises, naming the zone and the variable."""
        with pytest.raises(ConfigError, match="MUTEPRO_ZONE='z9'"):
            resolve_client_rack(env={"MUTEPRO_ZONE": "z9"}, zone_map={"z1": "rack-a"})

    def test_zone_without_map_is_the_rack(self) -> None:
        """Without a map the zone name itself is the rack."""
        assert resolve_client_rack(env={"AWS_AVAILABILITY_ZONE": "eu-west-1c"}).rack == "eu-west-1c"

    def test_nothing_set(self) -> None:
        """No source gives no rack, and says why."""
        res = resolve_client_rack(env={})
        assert res.rack is None and "MUTEPRO_CLIENT_RACK" in res.source


class TestLoadZoneMap:
    def test_rejects_non_mapping(self, tmp_path: Path) -> None:
        """A list is not a zone map."""
        path = tmp_path / "m.yaml"
        path.write_text("- a\n- b\n")
        with pytest.raises(ConfigError, match="mapping"):
            load_zone_map(path)

    def test_rejects_empty_rack(self, tmp_path: Path) -> None:
        """Every zone needs a rack name."""
        path = tmp_path / "m.yaml"
        path.write_text("z1: ''\n")
        with pytest.raises(ConfigError, match="'z1'"):
            load_zone_map(path)


class TestReadiness:
    def test_ready_cluster(self) -> None:
        """Racks everywhere and the rack-aware selector: ready."""
        cfg = {b: {"broker.rack": r, "replica.selector.class": RACK_AWARE_SELECTOR} for b, r in BROKER_RACKS.items()}
        assert evaluate_readiness(cfg, "rack-a").ready

    def test_missing_selector_and_rack_name_the_fix(self) -> None:
        """Default selector and a missing rack each give a problem with the setting to change."""
        cfg = {
            1: {"broker.rack": "rack-a", "replica.selector.class": None},
            2: {"broker.rack": None, "replica.selector.class": RACK_AWARE_SELECTOR},
        }
        report = evaluate_readiness(cfg)
        assert not report.ready
        problems = " | ".join(report.all_problems)
        assert f"replica.selector.class={RACK_AWARE_SELECTOR}" in problems
        assert "broker 2: broker.rack is not set" in problems

    def test_client_rack_must_match_a_broker_rack(self) -> None:
        """A client.rack no broker has means every fetch goes to the leader."""
        cfg = {1: {"broker.rack": "rack-a", "replica.selector.class": RACK_AWARE_SELECTOR}}
        report = evaluate_readiness(cfg, "us-east-1a")
        assert not report.ready and "matches no broker.rack" in report.problems[0]


def _stats(partitions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"topics": {"t": {"partitions": partitions}}}


class TestLocalityReport:
    def test_follower_on_own_rack(self) -> None:
        """Fetching partition 0 from broker 3 (rack-c) while broker 1 leads is local and from a follower."""
        stats = _stats(
            {
                "0": {"partition": 0, "broker": 3, "leader": 1, "desired": True, "fetch_state": "active"},
                "1": {"partition": 1, "broker": 2, "leader": 2, "desired": True, "fetch_state": "active"},
                "-1": {"partition": -1, "broker": -1, "leader": -1, "desired": False, "fetch_state": "none"},
                "2": {"partition": 2, "broker": 1, "leader": 1, "desired": False, "fetch_state": "none"},
            }
        )
        report = LocalityReport.from_stats(json.dumps(stats), BROKER_RACKS, "rack-c")
        assert [p.partition for p in report.partitions] == [0, 1]
        assert [p.partition for p in report.local] == [0]
        assert [p.partition for p in report.from_followers] == [0]
        assert report.local_fraction == 0.5
        assert report.to_dict()["partitions"][0]["fetch_rack"] == "rack-c"

    def test_without_client_rack_nothing_is_local(self) -> None:
        """No client.rack: no partition counts as local."""
        stats = _stats({"0": {"partition": 0, "broker": 1, "leader": 1, "desired": True}})
        assert LocalityReport.from_stats(stats, BROKER_RACKS, None).local == ()

    def test_topic_filter(self) -> None:
        """Only the requested topics are reported."""
        stats = {"topics": {"a": {"partitions": {"0": {"partition": 0, "broker": 1, "leader": 1, "desired": True}}}}}
        assert LocalityReport.from_stats(stats, BROKER_RACKS, "rack-a", topics={"b"}).partitions == ()


class TestStatsCollector:
    def test_keeps_latest(self) -> None:
        """The collector reports from the most recent statistics document."""
        collector = StatsCollector()
        assert collector.report(BROKER_RACKS, "rack-a").partitions == ()
        collector(json.dumps(_stats({"0": {"partition": 0, "broker": 2, "leader": 2, "desired": True}})))
        collector(json.dumps(_stats({"0": {"partition": 0, "broker": 1, "leader": 2, "desired": True}})))
        report = collector.report(BROKER_RACKS, "rack-a")
        assert collector.count == 2
        assert report.partitions[0].fetching_from == 1 and report.partitions[0].local
