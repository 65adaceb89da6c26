"""The fault matrix's pure parts: its cell list, the figures from a synthetic recording, the verdicts (no broker)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import fault_matrix as fm
import fault_matrix_load as load
from fault_matrix_metrics import (
    DELIVERED,
    FAILED,
    Event,
    Span,
    cell_text,
    cell_verdict,
    delivery_figures,
    goal,
    lost_acked_by_partition,
    markdown,
    mute_figures,
    readback_figures,
    verdict,
    windows_for,
)

from mutepro.errors import ConfigError, MuteproError

# -- the cell list ---------------------------------------------------------------------------------------------


def test_declared_cells_are_valid_and_cover_every_axis() -> None:
    fm.validate(fm.CELLS)
    cells = fm.CELLS
    assert {c.fault for c in cells} == set(fm.FAULTS)
    assert {c.brokers for c in cells} == {3, 5}
    assert {c.rf for c in cells} >= {1, 3}
    assert any(c.acks == "all" for c in cells) and any(c.keyed for c in cells) and any(not c.keyed for c in cells)
    assert {c.value_bytes for c in cells} >= {512, 10_240}
    assert {c.partitions for c in cells} >= {12, 300}
    assert {c.load for c in cells} == {"open", "closed"} and any(c.rate == 50 for c in cells if c.load == "open")
    assert any(c.overloaded and c.fault == "none" for c in cells) and any(c.cpu_hogs for c in cells)
    limps = {(c.duty, c.period_s) for c in cells if c.fault == "limp"}
    assert (0.8, 1.0) in limps and (0.5, 4.0) in limps
    assert 2 <= sum(c.quick for c in cells) <= 4


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "Bad Name"}, "name"),
        ({"fault": "flood"}, "fault"),
        ({"brokers": 4}, "brokers"),
        ({"rf": 4}, "rf"),
        ({"acks": 1}, "acks"),
        ({"idempotent": True}, "idempotent"),
        ({"load": "burst"}, "load"),
        ({"rate": 0}, "rate"),
        ({"value_bytes": 4}, "value_bytes"),
        ({"fault": "limp", "duty": 1.0}, "duty"),
        ({"partitions": 0}, "partitions"),
    ],
)
def test_a_bad_cell_is_refused_naming_the_cell_and_the_field(change: dict[str, Any], field: str) -> None:
    bad = dataclasses.replace(fm.Cell("x", "stall"), **change)
    with pytest.raises(ConfigError, match=rf"cell .*: {field}") as err:
        fm.validate([bad])
    assert isinstance(err.value, MuteproError)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ConfigError, match="given twice"):
        fm.validate([fm.Cell("a", "stall"), fm.Cell("a", "limp")])


def test_selection_by_name_quick_and_groups_by_broker_count() -> None:
    assert [c.name for c in fm.select(fm.CELLS, None, quick=True)] == [c.name for c in fm.CELLS if c.quick]
    picked = fm.select(fm.CELLS, "overload_5b, stall_rf1_open", quick=False)
    assert [c.name for c in picked] == ["stall_rf1_open", "overload_5b"]  # the declared order
    with pytest.raises(ConfigError, match=r"unknown.*nope"):
        fm.select(fm.CELLS, "nope", quick=False)
    grouped = fm.groups(fm.CELLS)
    assert [b for b, _ in grouped] == [3, 5]
    assert sum(len(g) for _, g in grouped) == len(fm.CELLS)


# -- the figures ------------------------------------------------------------------------------------------------


def _recording() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 s at 10 msg/s from t0=100: each message delivered 10 ms later, except those sent in the fault
    (10-30 s), which wait until 30.5 s; message 5 failed, message 7 never reported."""
    sent = 100.0 + np.arange(400) / 10.0
    done = sent + 0.010
    rel = sent - 100.0
    in_fault = (rel >= 10.0) & (rel < 30.0)
    done[in_fault] = 130.5
    state = np.full(400, DELIVERED, dtype=np.uint8)
    state[5] = FAILED
    state[7] = 1  # accepted, no report
    return sent, done, state


def test_delivery_figures_from_a_synthetic_recording() -> None:
    sent, done, state = _recording()
    w = windows_for([Span(2, 10.0, 30.0, "stall")], (10.0, 30.0), load_s=40.0, warmup_s=2.0)
    f = delivery_figures(sent, done, state, 100.0, w)
    # before: 2-10 s, 80 messages delivered 10 ms after they were sent (#5 and #7 were sent at 0.5 and 0.7 s)
    assert f["before_msgs_s"] == 10.0
    assert f["during_msgs_s"] == 0.0  # everything sent in the fault is reported at 30.5 s, after it
    # after: 30-40 s: the 200 held messages plus 100 sent after
    assert f["after_msgs_s"] == 30.0
    assert f["p99_during_ms"] == pytest.approx(20_400.0, abs=200)  # sent at 10.0..29.9, all reported at 30.5
    assert (f["accepted"], f["delivered"], f["failed"], f["unreported"]) == (400, 398, 1, 1)
    assert sum(f["delivered_per_s"]) == 398


def test_windows_follow_the_measured_faults_and_default_to_the_plan() -> None:
    spans = [Span(1, 10.2, 14.0, "limp"), Span(2, 14.0, 30.4, "limp")]
    w = windows_for(spans, (10.0, 30.0), load_s=40.0, warmup_s=2.0)
    assert (w.before, w.during, w.after) == ((2.0, 10.2), (10.2, 30.4), (30.4, 40.0))
    assert windows_for([], (10.0, 30.0), 40.0, 2.0).during == (10.0, 30.0)


def test_readback_counts_loss_and_duplicates() -> None:
    state = np.array([DELIVERED, DELIVERED, FAILED, 1, 0, DELIVERED], dtype=np.uint8)
    copies = np.array([1, 0, 0, 0, 0, 3], dtype=np.int32)  # #1 acked but missing, #5 three times
    assert readback_figures(state, copies) == {"lost": 3, "lost_acked": 1, "duplicates": 2, "read_back": 4}


def _ev(t: float, kind: str, p: int, broker: int | None = 2) -> Event:
    return Event(t, kind, p, broker, "slow" if kind in ("mute", "remute") else kind)


REPLICAS = {0: [1], 1: [2], 2: [3], 3: [2]}  # RF 1: partitions 1 and 3 live on broker 2


def test_mute_figures_first_mute_wrong_partitions_flaps_and_unmute() -> None:
    spans = [Span(2, 10.0, 30.0, "stall")]
    events = [
        _ev(5.0, "mute", 0, 1),  # before the fault: a false mute (and unmuted before it)
        _ev(6.0, "unmute", 0, 1),
        _ev(10.8, "mute", 1),  # 0.8 s into the fault
        _ev(11.0, "mute", 2, 3),  # no replica on broker 2: wrong
        _ev(12.0, "mute", 3),
        _ev(14.0, "probe", 1),
        _ev(14.1, "remute", 1),  # a failed probe: the mute holds, no flap
        _ev(16.0, "unmute", 3),
        _ev(17.0, "mute", 3),  # a flap
        _ev(19.0, "unmute", 3),
        _ev(20.0, "mute", 3),  # a second flap of the same partition
        _ev(25.0, "unmute", 2, 3),
        _ev(31.0, "unmute", 1),
        _ev(33.2, "unmute", 3),  # 3.2 s after the fault: the last
    ]
    m = mute_figures(events, spans, REPLICAS, end_s=45.0)
    assert m["mutes"] == 6 and m["remutes"] == 1
    assert m["first_mute_s"] == pytest.approx(0.8)
    assert m["wrong"] == [2]
    assert (m["flaps"], m["max_flaps_per_partition"]) == (2, 2)
    assert m["unmute_after_s"] == pytest.approx(3.2)
    assert m["false_mutes"] == 1
    assert m["still_muted"] == []


def test_unmute_after_is_none_while_a_partition_stays_muted_and_zero_when_none_was() -> None:
    spans = [Span(2, 10.0, 30.0, "limp")]
    still = mute_figures([_ev(11.0, "mute", 1), _ev(31.0, "probe", 1)], spans, REPLICAS, end_s=45.0)
    assert still["unmute_after_s"] is None and still["still_muted"] == [1]
    released = mute_figures([_ev(11.0, "mute", 1), _ev(20.0, "unmute", 1)], spans, REPLICAS, end_s=45.0)
    assert released["unmute_after_s"] == 0.0
    late = mute_figures([_ev(32.0, "mute", 1), _ev(36.5, "unmute", 1)], spans, REPLICAS, end_s=45.0)
    assert late["unmute_after_s"] == pytest.approx(6.5) and late["false_mutes"] == 0  # within the settle time


def test_a_healthy_run_counts_every_mute_as_false() -> None:
    m = mute_figures([_ev(3.0, "mute", 0, 1), _ev(4.0, "unmute", 0, 1)], [], REPLICAS, end_s=40.0)
    assert (m["mutes"], m["false_mutes"], m["first_mute_s"], m["wrong"]) == (1, 1, None, [])


def test_rotating_faults_judge_each_mute_by_the_brokers_faulted_then() -> None:
    spans = [Span(1, 10.0, 14.0, "limp"), Span(2, 14.0, 18.0, "limp"), Span(3, 18.0, 22.0, "limp")]
    # partition 2 (broker 3) muted during broker 1's turn (settle of no span of broker 3): wrong;
    # partition 0 (broker 1) muted at 15 s: broker 1's turn is settling (ended at 14 s): not wrong
    events = [_ev(11.0, "mute", 2, 3), _ev(15.0, "mute", 0, 1), _ev(12.5, "mute", 0, 1)]
    m = mute_figures(events, spans, REPLICAS, end_s=40.0)
    assert m["wrong"] == [2]
    assert m["first_mute_s"] == pytest.approx(2.5)


def test_a_mute_blaming_a_broker_that_inherited_leaderships_is_counted() -> None:
    spans = [Span(2, 10.0, 30.0, "stall")]
    replicas = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
    leaders = [(0.0, {0: 1, 1: 2, 2: 3}), (19.0, {0: 1, 1: 1, 2: 3})]  # broker 1 takes over partition 1
    events = [_ev(19.5, "mute", 0, 1), _ev(19.6, "mute", 2, 3)]
    m = mute_figures(events, spans, replicas, end_s=40.0, leaders=leaders)
    assert m["blamed_heir"] == 1  # broker 1 inherited; broker 3 did not
    assert m["wrong"] == []  # every partition has a replica on broker 2 (acks=all: all wait for it)


# -- verdicts and the table -------------------------------------------------------------------------------------


def test_verdicts_compare_within_the_spread() -> None:
    assert verdict("during_msgs_s", 20_000, 19_000) == "same"  # 5 % apart
    assert verdict("during_msgs_s", 20_000, 13_000) == "better"
    assert verdict("during_msgs_s", 12_000, 20_000) == "worse"
    assert verdict("p99_during_ms", 7.0, 19_400.0) == "better"
    assert verdict("p99_during_ms", 12.0, 30.0) == "same"  # under the 25 ms floor
    assert verdict("p99_during_ms", 9_100.0, 7_500.0) == "same"  # within 30 %: one run each
    assert verdict("p99_during_ms", 12_000.0, 7_500.0) == "worse"
    assert verdict("lost", 1, 0) == "worse" and verdict("duplicates", 0, 0) == "same"
    assert verdict("buffer_errors", None, 3) == "n/a"


def _mute(**over: Any) -> dict[str, Any]:
    base = {"mutes": 2, "faults": 1, "false_mutes": 0, "first_mute_s": 0.9, "wrong": [], "flaps": 0,
            "max_flaps_per_partition": 0, "unmute_after_s": 2.0, "rerouted": 0}  # fmt: skip
    return {**base, **over}


def test_goals_follow_the_issue() -> None:
    stall = {"fault": "stall", "rf": 1, "acks": "1", "keyed": True}
    assert goal("first_mute_s", stall, _mute()) == "met"
    assert goal("first_mute_s", stall, _mute(first_mute_s=2.4)) == "missed"
    assert goal("first_mute_s", {**stall, "rf": 3, "acks": "all"}, _mute()) == "n/a"  # not a leader stall
    assert goal("wrong", stall, _mute(wrong=[4])) == "missed"
    assert goal("flaps", stall, _mute(flaps=3, max_flaps_per_partition=1)) == "met"
    assert goal("flaps", stall, _mute(flaps=3, max_flaps_per_partition=2)) == "missed"
    assert goal("unmute_after_s", stall, _mute(unmute_after_s=None)) == "missed"
    assert goal("unmute_after_s", stall, _mute(unmute_after_s=7.5)) == "missed"
    assert goal("unmute_after_s", stall, _mute(mutes=0)) == "n/a"
    assert goal("rerouted", stall, _mute(rerouted=500)) == "n/a"  # rerouting keys away from a fault is the point
    healthy = {"fault": "none", "healthy": True, "keyed": True}
    assert goal("false_mutes", healthy, _mute(false_mutes=1)) == "missed"
    assert goal("rerouted", healthy, _mute(rerouted=1)) == "missed"
    assert goal("wrong", healthy, _mute()) == "n/a"
    overloaded = {"fault": "none", "overloaded": True, "keyed": True}
    assert goal("rerouted", overloaded, _mute(rerouted=486_565)) == "missed"


def _entry() -> dict[str, Any]:
    plain = {"during_msgs_s": 13_000.0, "during_over_before": 0.65, "p99_during_ms": 19_400.0,
             "buffer_errors": 534, "lost": 0, "duplicates": 0}  # fmt: skip
    mute = {**plain, "during_msgs_s": 20_000.0, "during_over_before": 1.0, "p99_during_ms": 7.0, "buffer_errors": 0,
            "mute": _mute(unmute_after_s=None, flaps=1, max_flaps_per_partition=1)}  # fmt: skip
    return {"cell": {"fault": "stall", "rf": 1, "acks": "1"}, "plain": plain, "mute": mute}


def test_grid_cells_text_and_colour() -> None:
    e = _entry()
    assert cell_text("during_msgs_s", e) == "20,000 / 13,000" and cell_verdict("during_msgs_s", e) == "better"
    assert cell_text("p99_during_ms", e) == "7 / 19,400" and cell_verdict("p99_during_ms", e) == "better"
    assert cell_text("unmute_after_s", e) == "still muted" and cell_verdict("unmute_after_s", e) == "missed"
    assert cell_text("flaps", e) == "1 (1)" and cell_verdict("flaps", e) == "met"
    assert cell_verdict("lost", e) == "same"
    assert cell_verdict("lost", {"error": "boom", "cell": {}}) == "n/a"


def test_markdown_has_a_row_per_cell_with_marks() -> None:
    table = markdown({"cells": {"stall_rf1_open": _entry(), "broken": {"error": "cluster broken", "cell": {}}}})
    lines = table.splitlines()
    assert len(lines) == 4 and lines[0].startswith("| cell |")
    assert "| stall_rf1_open | 20,000 / 13,000 ▲ |" in lines[2]
    assert "still muted ✗" in lines[2]
    assert lines[3].startswith("| broken | error: cluster broken")


def test_keyed_off_home_counts_messages_away_from_their_keys_partition() -> None:
    keys = 1000
    seq = np.arange(3 * keys)
    plain_part = (seq % keys % 12).astype(np.int16)
    mute_part = plain_part.copy()
    mute_part[:5] = 11 - mute_part[:5]  # five messages rerouted (12 partitions: 11 - p differs from p)
    delivered = np.full(seq.size, DELIVERED, dtype=np.uint8)
    plain = {"_partition": plain_part, "_state": delivered}
    mute = {"_partition": mute_part, "_state": delivered}
    assert fm.keyed_off_home(plain, mute) == 5
    assert fm.keyed_off_home({"_partition": None}, mute) is None


# -- the load loops (fake producer, fake clock) -------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class _Msg:
    def __init__(self, value: bytes, partition: int) -> None:
        self._value, self._partition = value, partition

    def value(self) -> bytes:
        return self._value

    def partition(self) -> int:
        return self._partition


class _Producer:
    """Accepts every message and delivers it on the next poll; each poll advances the clock by its timeout (or
    1 ms), each produce() by 10 us."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.waiting: list[tuple[Any, _Msg]] = []
        self.keys: list[Any] = []

    def produce(self, topic: str, value: bytes, key: Any = None, on_delivery: Any = None) -> None:
        self.clock.now += 1e-5
        self.keys.append(key)
        self.waiting.append((on_delivery, _Msg(value, len(self.waiting) % 12)))

    def poll(self, timeout: float = 0.0) -> int:
        self.clock.now += max(timeout, 0.001)
        waiting, self.waiting = self.waiting, []
        for cb, msg in waiting:
            cb(None, msg)
        return len(waiting)


def test_open_loop_keeps_its_schedule_and_continues_the_sequence_numbers() -> None:
    clock = _Clock()
    producer = _Producer(clock)
    rec = load.Recording(1000, clock=clock)
    first = load.open_loop(producer, "t", rec, t0=50.0, rate=100, seconds=2.0, keyed=True, pad=b"x")
    assert first == {"offered": 200, "buffer_errors": 0, "rejected": 0}
    more = load.open_loop(producer, "t", rec, t0=clock.now, rate=100, seconds=0.5, keyed=True, pad=b"x", first=200)
    assert more["offered"] == 250
    producer.poll(0)
    assert bytes(rec.state[:250]) == bytes([load.DELIVERED]) * 250 and rec.state[250] == load.NOT_SENT
    assert producer.keys[:2] == [b"key-0000", b"key-0001"] and producer.keys[200] == b"key-0200"
    # message n was sent no earlier than its due time t0 + n / rate
    assert all(rec.sent[n] >= 50.0 + n / 100 - 1e-9 for n in range(200))


def test_closed_loop_stops_at_its_time_and_muted_reads_the_last_event_per_partition() -> None:
    clock = _Clock()
    rec = load.Recording(100_000, clock=clock)
    res = load.closed_loop(_Producer(clock), "t", rec, stop_at=50.01, keyed=False, pad=b"", first=10)
    assert res["offered"] > 10 and rec.state[9] == load.NOT_SENT and rec.state[10] != load.NOT_SENT
    assert clock.now >= 50.01
    assert load.muted([(1.0, "mute", 3, 2, "slow"), (2.0, "probe", 3, 2, "slow")])
    assert not load.muted([(1.0, "mute", 3, 2, "slow"), (3.0, "unmute", 3, 2, "unmute")])


def test_lost_acknowledged_messages_are_counted_per_partition() -> None:
    """#1 (partition 2) and #4 (partition 0) acked and missing; #2 failed, #3 read back: {0: 1, 2: 1}."""
    state = np.array([DELIVERED, DELIVERED, FAILED, DELIVERED, DELIVERED], dtype=np.uint8)
    copies = np.array([1, 0, 0, 1, 0], dtype=np.int32)
    partition = np.array([0, 2, 1, 1, 0], dtype=np.int16)
    assert lost_acked_by_partition(state, copies, partition) == {0: 1, 2: 1}
