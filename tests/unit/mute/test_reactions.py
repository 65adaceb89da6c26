"""What follows a breaker transition: events, their listeners and history, the state (mutepro.mute.reactions)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from mutepro.detect.model import MuteReason
from mutepro.mute.manager import MuteEvent, MuteEventKind, opened_partitions
from tests.unit.mute._rig import Rig, T


class TestEventsAndState:
    def test_state_content(self, rig: Rig) -> None:
        """state() lists every partition's breaker state, leader, reason and opens, plus muted brokers."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        state = rig.mgr.state()
        assert set(state) == {"topics", "brokers"}
        parts = state["topics"][T]
        assert sorted(parts) == list(range(6))
        assert parts[1] == {"state": "closed", "leader": 2, "reason": None, "opens": 0}
        assert (parts[2]["state"], parts[2]["leader"], parts[2]["opens"]) == ("open", 3, 1)
        assert str(parts[2]["reason"]).startswith("slow_call")
        assert (parts[0]["state"], parts[0]["reason"]) == ("forced_open", "manual")
        assert state["brokers"] == {}

    def test_event_is_frozen(self, rig: Rig) -> None:
        """MuteEvents are immutable records."""
        rig.mgr.mute(T, 1)
        with pytest.raises(FrozenInstanceError):
            rig.events[0].reason = "x"  # type: ignore[misc]

    def test_an_added_listener_hears_every_later_event(self, rig: Rig) -> None:
        """add_event_listener: called after on_event with every event from then on, not the earlier ones."""
        rig.mgr.mute(T, 1)
        heard: list[MuteEvent] = []
        rig.mgr.add_event_listener(heard.append)
        rig.mgr.mute(T, 2)
        rig.mgr.unmute(T, 2)
        assert [(e.kind, e.partition) for e in heard] == [("mute", 2), ("unmute", 2)]
        assert rig.events[-2:] == heard

    def test_on_event_and_events_agree(self, rig: Rig) -> None:
        """on_event receives exactly the events kept in manager.events, in order."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        assert rig.events == rig.mgr.events
        assert [e.kind for e in rig.events] == ["mute", "mute", "unmute"]

    def test_kinds_and_reasons_are_enums(self, rig: Rig) -> None:
        """Event kinds are MuteEventKind and built-in reasons MuteReason members, equal to their plain names."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        kinds = [e.kind for e in rig.events]
        assert kinds == [MuteEventKind.MUTE, MuteEventKind.MUTE, MuteEventKind.UNMUTE]
        assert all(type(k) is MuteEventKind for k in kinds)
        assert [e.reason for e in rig.events] == [MuteReason.SLOW_CALL, MuteReason.MANUAL, "unmute"]
        assert [k.muted for k in kinds] == [True, True, False]

    def test_log_fields_are_plain_names(self, rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
        """The mute's log record carries the reason as its name, not an enum's repr."""
        with caplog.at_level("INFO", logger="mutepro"):
            rig.stall(2)
        record = next(r for r in caplog.records if r.getMessage().startswith("partition_mute"))
        assert "reason='slow_call'" in record.getMessage()
        assert "MuteReason" not in record.getMessage()

    def test_opened_partitions(self, rig: Rig) -> None:
        """opened_partitions lists the (topic, partition) of mute and remute events in order."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        assert opened_partitions(rig.events) == [(T, 2), (T, 0)]

    def test_history_bounded(self, rig: Rig) -> None:
        """manager.events keeps a bounded history (at most 1,000 events)."""
        for _ in range(600):
            rig.mgr.mute(T, 0)
            rig.mgr.unmute(T, 0)
        assert len(rig.mgr.events) <= 1000
        assert len(rig.events) == 1200
        assert rig.mgr.events[-1] == rig.events[-1]
