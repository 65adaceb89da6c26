"""RepeatedErrors: the first error of a code is logged, identical ones within the window are counted."""

from __future__ import annotations

from mutepro.producer.repeats import RepeatedErrors


class TestRepeatedErrors:
    def test_the_first_event_of_a_code_is_logged_with_nothing_left_out(self) -> None:
        assert RepeatedErrors(window_s=10.0).admit(-195, 0.0) == 0

    def test_repeats_within_the_window_are_left_out_and_counted_on_the_next_line(self) -> None:
        r = RepeatedErrors(window_s=10.0)
        r.admit(-195, 0.0)
        assert [r.admit(-195, t) for t in (0.1, 0.3, 9.9)] == [None, None, None]
        assert r.admit(-195, 10.0) == 3
        assert r.admit(-195, 10.5) is None
        assert r.admit(-195, 20.0) == 1

    def test_codes_are_counted_apart(self) -> None:
        r = RepeatedErrors(window_s=10.0)
        assert r.admit(-195, 0.0) == 0
        assert r.admit(-187, 0.1) == 0  # another code: logged at once
        assert r.admit(-195, 0.2) is None
        assert r.admit(-187, 10.1) == 0

    def test_a_zero_window_logs_every_event(self) -> None:
        r = RepeatedErrors(window_s=0.0)
        assert [r.admit(-195, 0.0), r.admit(-195, 0.0)] == [0, 0]
