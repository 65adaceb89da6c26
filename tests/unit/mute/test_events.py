"""What the mute manager announces (mutepro.mute.events)."""

from __future__ import annotations

from mutepro.mute.events import EventLog, MuteEvent, MuteEventKind, opened_partitions, plain_fields


def _event(kind: MuteEventKind, partition: int = 0) -> MuteEvent:
    return MuteEvent(kind, "orders", partition, 2, "slow_call", {"oldest_age_s": 1.5}, 10.0)


class TestMuteEventKind:
    def test_mute_and_remute_take_no_traffic(self) -> None:
        assert [k.value for k in MuteEventKind if k.muted] == ["mute", "remute"]

    def test_a_kind_compares_equal_to_its_name(self) -> None:
        assert MuteEventKind.PROBE == "probe"


class TestOpenedPartitions:
    def test_only_mutes_and_remutes_in_order(self) -> None:
        events = [_event(MuteEventKind.MUTE, 3), _event(MuteEventKind.PROBE, 3), _event(MuteEventKind.REMUTE, 1),
                  _event(MuteEventKind.UNMUTE, 1)]
        assert opened_partitions(events) == [("orders", 3), ("orders", 1)]


class TestEventLog:
    def test_listeners_get_every_event_in_the_order_added(self) -> None:
        got: list[tuple[str, str]] = []
        log = EventLog(lambda e: got.append(("first", e.kind.value)))
        log.add_listener(lambda e: got.append(("second", e.kind.value)))
        log.announce(_event(MuteEventKind.MUTE))
        assert got == [("first", "mute"), ("second", "mute")]

    def test_the_history_is_bounded_and_trimmed_in_place(self) -> None:
        log = EventLog()
        history = log.history
        for i in range(EventLog.LIMIT + 1):
            log.announce(_event(MuteEventKind.PROBE, i))
        assert log.history is history  # readers holding the list see the trim
        assert len(history) == EventLog.LIMIT + 1 - EventLog.LIMIT // 10
        assert history[-1].partition == EventLog.LIMIT


class TestPlainFields:
    def test_figures_that_clash_with_the_event_fields_are_renamed(self) -> None:
        assert plain_fields({"topic": "x", "broker": 3, "oldest_age_s": 1.5}) == {
            "detail_topic": "x", "detail_broker": 3, "oldest_age_s": 1.5,
        }
