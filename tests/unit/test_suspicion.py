"""A leader's outlier episodes: steer first, mute on confirmation (mutepro.mute.suspicion)."""

from __future__ import annotations

from mutepro.mute.suspicion import EPISODE_S, RECUR_S, Suspicion


class TestSuspicion:
    def test_a_first_episode_is_not_confirmed(self) -> None:
        """Standing out for the first time: active (avoided), not confirmed (not muted)."""
        s = Suspicion()
        assert s.begin(10.0) is True
        assert s.active and not s.confirmed(10.4)

    def test_begin_during_an_episode_starts_nothing_new(self) -> None:
        """begin() while an episode is under way keeps its start."""
        s = Suspicion()
        s.begin(10.0)
        assert s.begin(10.5) is False and s.since == 10.0

    def test_a_recurrence_within_the_window_is_confirmed(self) -> None:
        """Ended at 11 s, standing out again at 12 s (within RECUR_S): confirmed."""
        s = Suspicion()
        s.begin(10.0)
        s.end(11.0)
        assert not s.active and s.last_end == 11.0
        s.begin(12.0)
        assert s.confirmed(12.4)

    def test_a_recurrence_after_the_window_is_a_first_episode(self) -> None:
        """Standing out again RECUR_S + 1 s after the last episode: not confirmed."""
        s = Suspicion()
        s.begin(10.0)
        s.end(11.0)
        s.begin(11.0 + RECUR_S + 1.0)
        assert not s.confirmed(11.0 + RECUR_S + 1.2)

    def test_a_long_episode_confirms_itself(self) -> None:
        """One episode lasting EPISODE_S: confirmed without a recurrence."""
        s = Suspicion()
        s.begin(10.0)
        assert not s.confirmed(10.0 + EPISODE_S - 0.1)
        assert s.confirmed(10.0 + EPISODE_S)

    def test_end_without_an_episode_changes_nothing(self) -> None:
        """end() when nothing is under way keeps the last end."""
        s = Suspicion()
        s.end(5.0)
        assert s.last_end is None
