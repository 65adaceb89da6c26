"""A leader's outlier episodes: steer first, mute on confirmation (mutepro.mute.suspicion)."""

from __future__ import annotations

from mutepro.mute.suspicion import CONFIRM_EPISODES, Suspicion
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy
from tests.unit.mute._rules import topic

_RT = runtime_of(TopicPolicy())
RECUR_S, EPISODE_S = _RT.outlier_recur_s, _RT.outlier_episode_s  # the defaults: 5 s, 1.5 s


class TestSuspicion:
    def test_a_first_episode_is_not_confirmed(self) -> None:
        """Standing out for the first time: active (avoided), not confirmed (not muted)."""
        s = Suspicion(RECUR_S, EPISODE_S)
        assert s.begin(10.0) is True
        assert s.active and not s.confirmed(10.4)

    def test_begin_during_an_episode_starts_nothing_new(self) -> None:
        """begin() while an episode is under way keeps its start."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.begin(10.0)
        assert s.begin(10.5) is False and s.since == 10.0

    def test_a_second_deep_episode_is_confirmed(self) -> None:
        """Deep episodes at 10 and 12 s (the second within RECUR_S of the first's end): the second is confirmed."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.begin(10.0)
        s.mark_deep()
        s.end(11.0)
        assert not s.active and s.last_end == 11.0 and s.last_deep
        s.begin(12.0)
        assert s.chain == CONFIRM_EPISODES == 2 and not s.confirmed(12.1)  # not past the mute floor yet
        s.mark_deep()
        assert s.confirmed(12.4)

    def test_a_shallow_episode_starts_the_chain_over(self) -> None:
        """A 0.15 s pause, then a 0.42 s one 4 s later (a healthy broker, seen): the second is not confirmed."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.begin(10.0)
        s.end(10.2)  # never past the mute floor
        s.begin(14.2)
        s.mark_deep()
        assert s.chain == 1 and not s.confirmed(14.6)

    def test_nothing_under_way_is_not_confirmed(self) -> None:
        """Between episodes nothing is confirmed, however long the chain."""
        s = Suspicion(RECUR_S, EPISODE_S)
        for start in (10.0, 12.0, 14.0):
            s.begin(start)
            s.mark_deep()
            s.end(start + 1)
        assert not s.confirmed(15.5)

    def test_a_recurrence_after_the_window_is_a_first_episode(self) -> None:
        """Standing out again RECUR_S + 1 s after the last episode: not confirmed."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.begin(10.0)
        s.end(11.0)
        s.begin(11.0 + RECUR_S + 1.0)
        assert s.chain == 1 and not s.confirmed(11.0 + RECUR_S + 1.2)

    def test_a_long_episode_confirms_itself(self) -> None:
        """One episode lasting EPISODE_S: confirmed without a recurrence."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.begin(10.0)
        assert not s.confirmed(10.0 + EPISODE_S - 0.1)
        assert s.confirmed(10.0 + EPISODE_S)

    def test_end_without_an_episode_changes_nothing(self) -> None:
        """end() when nothing is under way keeps the last end."""
        s = Suspicion(RECUR_S, EPISODE_S)
        s.end(5.0)
        assert s.last_end is None


class TestSettings:
    """slow_call.outlier_recur_ms and outlier_episode_ms decide; a topic's suspicions take its policy's."""

    def test_a_shorter_recurrence_window_breaks_the_chain(self) -> None:
        """Two deep episodes 2 s apart: a chain with the default 5 s, two first episodes with 1 s."""
        for recur_s, chain in ((RECUR_S, 2), (1.0, 1)):
            s = Suspicion(recur_s, EPISODE_S)
            s.begin(10.0)
            s.mark_deep()
            s.end(10.5)
            s.begin(12.5)
            assert s.chain == chain

    def test_a_shorter_episode_confirms_sooner(self) -> None:
        s = Suspicion(RECUR_S, 0.5)
        s.begin(10.0)
        assert not s.confirmed(10.4) and s.confirmed(10.5)

    def test_a_topic_takes_its_policy(self) -> None:
        policy = TopicPolicy.model_validate({"slow_call": {"outlier_recur_ms": 2000, "outlier_episode_ms": 800}})
        s = topic(policy=policy).suspicion(1)
        assert (s.recur_s, s.episode_s) == (2.0, 0.8)
