"""The demo's figures from recorded samples: rates per window, percentiles, batch stats, mute timings."""

from __future__ import annotations

import pytest

from mutepro.demo.samples import (
    BatchSample,
    Event,
    JobSamples,
    baseline_start,
    batch_stats,
    muted_steps,
    percentile,
    rate,
    smoothed,
    summarize,
    time_to_mute,
    time_to_unmute,
    windows,
)
from mutepro.demo.schedule import plan_faults


def _steady(samples: JobSamples, start: int, end: int, per_s: int, latency_ms: float = 10.0) -> None:
    for second in range(start, end):
        for _ in range(per_s):
            samples.add_delivery(second, latency_ms)


class TestRates:
    def test_rate_counts_whole_seconds_inside_the_window(self) -> None:
        """Rows/s over [2.5, 6.0) uses seconds 3, 4 and 5 only."""
        delivered = {2: 1000, 3: 30, 4: 60, 5: 90, 6: 1000}
        assert rate(delivered, 2.5, 6.0) == 60

    def test_rate_of_a_window_under_a_second_is_none(self) -> None:
        """No whole second inside the window: no rate rather than a made-up one."""
        assert rate({1: 5}, 1.2, 1.9) is None

    def test_smoothed_averages_neighbouring_seconds(self) -> None:
        """A batch landing every other second reads as the steady rate it is."""
        delivered = {0: 0, 1: 200, 2: 0, 3: 200, 4: 0}
        assert smoothed(delivered, 5, width=3)[1:4] == pytest.approx([200 / 3, 400 / 3, 200 / 3])
        assert smoothed(delivered, 5, width=1) == [0, 200, 0, 200, 0]


class TestPercentile:
    def test_nearest_rank(self) -> None:
        """p99 of 1..100 is 99, p50 is 50, the max is the 1.0 quantile."""
        values = [float(v) for v in range(100, 0, -1)]
        assert (percentile(values, 0.99), percentile(values, 0.5), percentile(values, 1.0)) == (99.0, 50.0, 100.0)

    def test_empty_is_none(self) -> None:
        """No rows delivered in a window: no latency figure."""
        assert percentile([], 0.99) is None


class TestBatches:
    def test_median_and_max_of_batches_started_in_the_window(self) -> None:
        """Only batches that started inside [start, end) count."""
        batches = [BatchSample(i, float(i), d, 100) for i, d in enumerate([9.0, 1.0, 2.0, 3.0, 50.0])]
        assert batch_stats(batches, 1, 4) == {"median": 2.0, "max": 3.0, "count": 3}
        assert batch_stats(batches, 10, 20) == {"median": None, "max": None, "count": 0}


class TestMuteTimings:
    def test_muted_steps_keep_changes_and_start_from_the_warm_up_state(self) -> None:
        """Per-batch observations become steps at each change; a warm-up observation sets the starting state."""
        observed = [(-3.0, 4), (1.0, 4), (2.0, 0), (3.0, 0), (10.0, 4), (11.0, 4), (20.0, 0)]
        assert muted_steps(observed) == [(0.0, 4), (2.0, 0), (10.0, 4), (20.0, 0)]
        assert muted_steps([]) == [(0.0, 0)]

    def test_time_to_mute_counts_from_the_phase_the_mute_happened_in(self) -> None:
        """Limp then stall: a first mute 5 s into the stall is reported as such, not 32 s into the fault."""
        plan = plan_faults(120, "both")  # limp 30-57, stall 57-84
        assert time_to_mute([Event(62.0, "mute", "t:1", "w")], plan) == (5.0, "stall")
        assert time_to_mute([Event(33.5, "remute", "t:1", "w")], plan) == (3.5, "limp")

    def test_mutes_before_the_fault_do_not_count_as_detection(self) -> None:
        """A (false) mute before the fault is not the fault being detected."""
        plan = plan_faults(120, "stall")
        assert time_to_mute([Event(5.0, "mute", "t:1", "w")], plan) is None

    def test_time_to_unmute_waits_for_the_last_partition(self) -> None:
        """From the fault's end until nothing is muted; 0 if nothing was muted then; None if never."""
        steps = [(0.0, 0), (60.0, 2), (61.0, 4), (88.0, 1), (90.5, 0)]
        assert time_to_unmute(steps, 84.0) == 6.5
        assert time_to_unmute(steps[:4], 84.0) is None
        assert time_to_unmute([(0.0, 0)], 84.0) == 0.0


class TestSummary:
    def test_windows_leave_the_warm_up_out_of_the_baseline(self) -> None:
        """'before' starts after its warm-up part; 'fault' spans every fault phase."""
        plan = plan_faults(120, "both")
        spans = windows(plan)
        assert spans["before"] == (baseline_start(plan), 30.0)
        assert 0 < baseline_start(plan) < 30
        assert spans["fault"] == (30.0, 84.0)
        assert set(spans) == {"before", "limp", "stall", "fault", "after"}

    def test_summary_of_a_job_that_keeps_its_rate_through_the_fault(self) -> None:
        """Steady 100 rows/s throughout: ratio 1.0; losses, duplicates and failures come through as recorded."""
        plan = plan_faults(40, "stall")  # stall 10-28
        job = JobSamples("m", committed=4000, read_back=4010, distinct=4000, lost=0)
        _steady(job, 0, 40, 100)
        job.events = [Event(15.0, "mute", "t:1", "w"), Event(30.0, "unmute", "t:1", "w"), Event(16.0, "failed", "x")]
        job.muted = [(14.0, 0), (15.5, 1), (29.0, 1), (30.0, 0)]
        s = summarize(job, plan)
        assert s.rows_per_s["before"] == s.rows_per_s["stall"] == s.rows_per_s["after"] == 100
        assert s.fault_vs_before == 1.0
        assert (s.lost, s.duplicates, s.failures, s.mutes) == (0, 10, 1, 1)
        assert (s.time_to_mute_s, s.muted_in, s.time_to_unmute_s) == (5.0, "stall", 2.0)
        assert s.p99_ms["all"] == 10.0

    def test_summary_of_a_job_that_stops_during_the_fault(self) -> None:
        """Nothing written during the stall: ratio 0 and no latency figure for the stall."""
        plan = plan_faults(40, "stall")
        job = JobSamples("b")
        _steady(job, 0, 10, 100)
        _steady(job, 28, 40, 100, latency_ms=5000.0)
        s = summarize(job, plan)
        assert s.fault_vs_before == 0.0
        assert s.p99_ms["stall"] is None
        assert s.p99_ms["after"] == 5000.0
        assert s.time_to_mute_s is None
