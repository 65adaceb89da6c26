"""The sink's end-of-task flush (mutepro.spark.flushing) against a scripted stand-in for the producer."""

from __future__ import annotations

from mutepro.spark.flushing import MAX_RESCUES, flush_task


class Scripted:
    """flush() reports ``left`` until it has been called ``flushes`` times, then 0; each in-flight rescue answers
    the next entry of ``rescues`` (the last one repeats)."""

    def __init__(self, flushes: int, rescues: list[int | None], left: int = 3) -> None:
        self.flushes = flushes
        self.rescues = rescues
        self.left = left
        self.flush_calls: list[float | None] = []
        self.rescue_calls = 0
        self.hedges: list[float | None] = []

    def flush(self, timeout: float | None = -1) -> int:
        self.flush_calls.append(timeout)
        return 0 if len(self.flush_calls) >= self.flushes else self.left

    def _rescue_in_flight(self, slow_calls: float = 1.0, hedge_after_s: float | None = None) -> int | None:
        self.hedges.append(hedge_after_s)
        answer = self.rescues[min(self.rescue_calls, len(self.rescues) - 1)]
        self.rescue_calls += 1
        return answer


class TestFlushTask:
    def test_a_quiet_task_flushes_once_and_never_rescues(self) -> None:
        """Everything delivered at the first step: no rescue is even asked for."""
        producer = Scripted(flushes=1, rescues=[None])
        assert flush_task(producer, None) == (0, 0)
        assert producer.rescue_calls == 0 and all(t is not None and t > 0 for t in producer.flush_calls)

    def test_asks_after_every_step_until_a_rescue_is_due(self) -> None:
        """While the rescue is not due (healthy partitions still delivering), every step asks again."""
        producer = Scripted(flushes=5, rescues=[None])
        assert flush_task(producer, None) == (0, 0)
        assert producer.rescue_calls == 4

    def test_repeated_rescues_are_bounded(self) -> None:
        """Copies stuck again are rescued again, at most MAX_RESCUES times per task; then it waits like flush()."""
        producer = Scripted(flushes=MAX_RESCUES * 3, rescues=[2])
        assert flush_task(producer, None) == (0, MAX_RESCUES)
        assert producer.rescue_calls == MAX_RESCUES

    def test_a_rescue_that_moved_nothing_is_not_repeated(self) -> None:
        """Only messages that must stay (explicit partitions) were stuck: purging them again would only add
        duplicates, so the task stops asking."""
        producer = Scripted(flushes=10, rescues=[None, 0, 5])
        assert flush_task(producer, None) == (0, 1)
        assert producer.rescue_calls == 2

    def test_the_timeout_still_bounds_the_flush(self) -> None:
        """mutepro.flushTimeout: what is left when it runs out is returned (the task then fails)."""
        producer = Scripted(flushes=10**9, rescues=[None])
        left, rescues = flush_task(producer, 0.0)
        assert (left, rescues) == (3, 0) and len(producer.flush_calls) == 1

    def test_the_hedge_is_passed_to_every_rescue_question(self) -> None:
        """mutepro.hedgeAfter reaches the producer with each question (None when the option turns it off)."""
        producer = Scripted(flushes=3, rescues=[None])
        flush_task(producer, None, 1.0)
        assert producer.hedges == [1.0, 1.0]
        off = Scripted(flushes=2, rescues=[None])
        flush_task(off, None)
        assert off.hedges == [None]
