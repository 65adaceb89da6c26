"""The driver: what MuteProducer's background threads do each round.

Every tick (``tick_interval_s``, 50 ms by default) :meth:`Driver.tick` serves pending delivery reports, feeds the
partition tallies to the mute manager (its detectors and breakers), rescues the queues of newly muted partitions
still stuck ``rescue.after_ms`` after the mute, releases holds and re-sends, logs the moves, and refreshes the
adaptive weights. :meth:`Driver.load_metadata` runs on its own thread (``list_topics()`` can block for its whole
timeout while a broker is stalled). librdkafka's statistics, error and throttle callbacks land here too.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException

from mutepro.detect.stats import StatsParseError, StatsSnapshot, parse_stats
from mutepro.logs import get_logger
from mutepro.policy.runtime import runtime_of
from mutepro.producer.core import Core
from mutepro.producer.holds import HoldQueues
from mutepro.producer.locality import LocalityMeter, RackSource
from mutepro.producer.repeats import RepeatedErrors
from mutepro.producer.rescue import Rescuer
from mutepro.producer.serving import DirectServing
from mutepro.trace.record import TraceRecorder

log = get_logger("mutepro.producer")

_METADATA_REFRESH_S = 10.0
#: how soon a topic wanted but not loaded yet (unknown to the cluster, or waiting for librdkafka) is looked up again
#: at first; each lookup that loads nothing doubles the wait up to :data:`METADATA_RETRY_MAX_S`, the way librdkafka
#: backs off its own retries (``retry.backoff.ms`` 100 ms doubling to ``retry.backoff.max.ms`` 1 s). Why back off:
#: with no broker reachable a lookup fails at once, and one every 50 ms cost ~2.5 ms of CPU a second -- 4x what
#: the plain client spends waiting in ``poll(1.0)`` -- for an answer that cannot come sooner than the cluster does.
#: A first message to a new topic on a healthy cluster is looked up at once (the send wakes the thread), so only a
#: topic the cluster does not answer for waits up to a second longer.
METADATA_RETRY_S = 0.05
METADATA_RETRY_MAX_S = 1.0
_WEIGHTS_REFRESH_S = 0.1
#: how often the bytes produced are split into local and remote (rack-aware partitioning's figure)
_LOCALITY_REFRESH_S = 1.0


class Driver:
    """The per-tick work and the metadata refresh of one producer (see the module docstring)."""

    def __init__(
        self, core: Core, holds: HoldQueues, rescuer: Rescuer, serving: DirectServing, *, name: str,
        user_stats_cb: Any = None, user_error_cb: Any = None, user_throttle_cb: Any = None,
        racks: RackSource | None = None, locality: LocalityMeter | None = None,
        recorder: TraceRecorder | None = None,
    ) -> None:
        self._core = core
        self._holds = holds
        self._rescuer = rescuer
        self._name = name
        self._serving = serving
        self._user_stats_cb = user_stats_cb
        self._user_error_cb = user_error_cb
        self._user_throttle_cb = user_throttle_cb
        self._stats: StatsSnapshot | None = None
        self._raw_stats: str | None = None  # the latest statistics, parsed when read (see on_stats)
        self._parsed_raw: str | None = None  # ... and the ones _stats was parsed from
        self._topic_checked: dict[str, float] = {}
        self._weights_at = 0.0
        self._racks = racks
        self._racks_at: float | None = None
        self._locality = locality
        self._locality_at = 0.0
        self._recorder = recorder
        # (sent, reported) totals as the last round drained them, and whether they had not moved since the round
        # before: the round found nothing new (see idle)
        self._counts: tuple[int, int] = (-1, -1)
        self.quiet = False
        # the wait before the next lookup of topics wanted and not loaded (see METADATA_RETRY_S)
        self._retry_s = METADATA_RETRY_S
        self._wanted_seen: frozenset[str] = frozenset()
        self._repeats = RepeatedErrors()

    def tick(self, now: float) -> None:
        core = self._core
        tracker = core.tracker
        manager = core.manager
        # Judge only on served reports: a partition whose reports merely sit unserved must not look silent.
        self._serving.serve_for_tick()
        with core.lock:  # the C fast path counts on other threads: read-and-zero under the gate
            tracker.checkpoint(now)
            drained = list(tracker.drain())
            counts = (tracker.sent_total, tracker.reported_total)
        self.quiet, self._counts = counts == self._counts, counts
        for topic, p, calls, failures, slow in drained:
            manager.rounds.record_many(topic, p, calls, failures, slow, now)
        # a quiet round judges nothing new: the statistics wait for a round that does (see on_stats)
        stats = self._stats if self.quiet else self.stats
        if self._recorder is not None:
            self._recorder.round(now, drained, tracker, list(tracker.topics), stats)
        opened = manager.rounds.evaluate(tracker.load, stats, tracker.busy)
        core.counters.avoids = manager.avoid_episodes
        if opened:
            self._rescuer.schedule(opened, now)
        if self._rescuer.pending and self._rescuer.due(now):
            self._rescuer.rescue()
        if self._holds.queues:
            self._holds.release()
        if self._holds.retry:
            self._holds.resend_retries()
        if self._rescuer.moves:
            with core.lock:
                rescued, self._rescuer.moves = self._rescuer.moves, {}
            for (topic, origin, why), targets in rescued.items():
                log.debug(
                    "messages_rescued", topic=topic, partition=origin, why=why, rescued=sum(targets.values()),
                    to_partitions=targets,
                )
        if core.reroutes:
            with core.lock:  # emptied in place: the C fast path counts into this very dict
                reroutes = dict(core.reroutes)
                core.reroutes.clear()
            for (topic, home), targets in reroutes.items():
                log.info(
                    "partition_reroute", topic=topic, partition=home, broker=manager.leader(topic, home),
                    rerouted=sum(targets.values()), to_partitions=targets,
                )
        self._refresh_weights(now)
        if self._locality is not None and now - self._locality_at >= _LOCALITY_REFRESH_S:
            self._locality_at = now
            for topic, tally in list(core.tracker.topics.items()):
                self._locality.update(topic, list(tally.sent_bytes), manager.racks.local_partitions(topic))

    def idle(self) -> bool:
        """True when the next rounds have nothing to look at until the application sends again: the last round
        found nothing new (no message sent or reported since the round before) and nothing since, no message is
        outstanding in a partition a round can judge (messages of a topic whose metadata is still loading are
        not: the metadata thread wakes the driver when it loads), and nothing is muted, avoided, held, due for a
        rescue or a re-send. The driver then parks (:mod:`mutepro.producer.pacing`; call after ``Pacer.park``)."""
        core = self._core
        tracker = core.tracker
        if not self.quiet or (tracker.sent_total, tracker.reported_total) != self._counts:
            return False
        # After a quiet round the busy partitions are exactly those with messages outstanding. Messages of topics
        # whose metadata is not loaded yet are outstanding too (in the totals) but in no partition a round could
        # judge: they do not keep the driver up (the metadata thread wakes it when their topic loads).
        if any(tracker.busy_now.values()):
            return False
        holds, rescuer, manager = self._holds, self._rescuer, core.manager
        if core.reroutes or holds.queues or holds.retry:
            return False
        if rescuer.pending or rescuer.in_hand or rescuer.moves or manager.muted_brokers():
            return False
        return not any(s.muted or s.probing or s.avoided for s in list(manager.snapshots.values()))

    def load_metadata(self, now: float) -> float:
        """Load the metadata of topics produced to before it was known, and refresh the known ones now and then.
        Returns the seconds until the next round has work: soon while a wanted topic is still unknown (backing off
        while nothing loads, see :data:`METADATA_RETRY_S`), else when the first refresh falls due
        (:meth:`Core.want_metadata` wakes the thread earlier)."""
        core = self._core
        manager = core.manager
        if self._racks is not None and (self._racks_at is None or now - self._racks_at > _METADATA_REFRESH_S):
            racks = self._racks.broker_racks()
            if racks is not None:  # None: not reachable now, asked again next round; the last answer stands
                self._racks_at = now
                manager.rounds.update_broker_racks(racks)
        due = [t for t in manager.known_topics() if now - self._topic_checked.get(t, 0.0) > _METADATA_REFRESH_S]
        wanted = [t for t in core.wanted_topics if t not in core.unassigned_topics]  # see Core.unassigned_topics
        loaded = False
        for topic in {*wanted, *due}:
            self._topic_checked[topic] = now
            try:
                md = core.inner.list_topics(topic, timeout=1.0)
            except KafkaException as err:
                log.debug("metadata_unavailable", topic=topic, error=str(err))
                continue
            tmd = md.topics.get(topic)
            if tmd is None or tmd.error is not None or not tmd.partitions:
                continue
            leaders = {p: pm.leader for p, pm in tmd.partitions.items()}
            slow_s = runtime_of(core.policy_for(topic)).slow_threshold_s
            with core.lock:
                tally = core.tracker.ensure(topic, len(tmd.partitions), slow_s)
                for p in core.early_delivered.pop(topic, ()):
                    if p < tally.count and tally.warm[p] < 0:
                        tally.warm[p] = tally.sent[p]  # delivered before tracking: warm, every tracked send judged
            replicas = {p: list(getattr(pm, "replicas", None) or [pm.leader]) for p, pm in tmd.partitions.items()}
            isrs = {p: list(getattr(pm, "isrs", None) or []) for p, pm in tmd.partitions.items()}
            manager.rounds.ensure_topic(topic, len(tmd.partitions), leaders, replicas, isrs)
            if self._recorder is not None:
                self._recorder.metadata(now, topic, tmd.partitions, core.policy_for(topic))
            if topic in core.wanted_topics:
                core.wanted_topics.discard(topic)
                loaded = True
        if loaded and core.pacer.parked:
            core.pacer.wake()  # the topic's partitions can be judged now (see idle)
        if core.wanted_topics:
            wanted_now = frozenset(core.wanted_topics)
            # a newly wanted topic, or one of them loaded: look again soon; nothing new: back off
            fresh = loaded or not wanted_now <= self._wanted_seen
            self._retry_s = METADATA_RETRY_S if fresh else min(METADATA_RETRY_MAX_S, 2 * self._retry_s)
            self._wanted_seen = wanted_now
            return self._retry_s
        self._retry_s, self._wanted_seen = METADATA_RETRY_S, frozenset()
        checked = [self._topic_checked.get(t, 0.0) for t in manager.known_topics()]
        if not checked:
            return _METADATA_REFRESH_S
        return min(_METADATA_REFRESH_S, max(METADATA_RETRY_S, min(checked) + _METADATA_REFRESH_S - now))

    def close(self) -> None:
        """The producer is closing (its threads have stopped): release the rack source's client, finish the
        trace."""
        if self._racks is not None:
            self._racks.close()
        if self._recorder is not None:
            self._recorder.close()

    def _refresh_weights(self, now: float) -> None:
        if now - self._weights_at < _WEIGHTS_REFRESH_S:
            return
        self._weights_at = now
        core = self._core
        for topic in core.manager.known_topics():
            if core.policy_for(topic).partitioner.adaptive:
                core.manager.rounds.refresh_weights(topic, core.tracker.counts(topic))

    # -- librdkafka callbacks (driver thread, inside inner.poll) -------------------------------------------

    def on_stats(self, raw: str) -> None:
        """librdkafka's statistics (every second), kept to be parsed when read: they arrive inside whichever poll
        serves them -- often the application's, waiting -- and parsing cost ~250 us of CPU there each second, as
        much as the plain client's whole wait. The driver's rounds read them (:attr:`stats`); a parked driver
        (an idle producer) reads none."""
        self._raw_stats = raw
        if self._user_stats_cb is not None:
            self._core.callbacks.put(self._user_stats_cb, raw)

    @property
    def stats(self) -> StatsSnapshot | None:
        """The latest statistics librdkafka sent (None before the first); partition leaders are taken from them."""
        raw = self._raw_stats
        if raw is None or raw is self._parsed_raw:
            return self._stats
        self._parsed_raw = raw  # (another thread reading at once may parse the same text too: harmless)
        try:
            snap = parse_stats(raw)
        except StatsParseError as err:
            log.debug("stats_unparsable", error=str(err))
        else:
            self._stats = snap
            by_topic: dict[str, dict[int, int]] = {}
            for (topic, p), ps in snap.partitions.items():
                if ps.leader >= 0:
                    by_topic.setdefault(topic, {})[p] = ps.leader
            for topic, leaders in by_topic.items():
                self._core.manager.rounds.update_leaders(topic, leaders)
                if self._recorder is not None:
                    self._recorder.leaders(self._core.clock(), topic, leaders)
        return self._stats

    def on_error(self, err: KafkaError) -> None:
        code = err.code()
        left_out = self._repeats.admit(code, self._core.clock())
        if left_out is not None:
            log.warning("client_error", producer=self._name, error=str(err), code=code, repeated=left_out)
        if self._user_error_cb is not None:
            self._core.callbacks.put(self._user_error_cb, err)
        else:
            self._serving.served_event()  # the plain client's poll() counts it, callback or not

    def on_throttle(self, event: Any) -> None:
        if self._user_throttle_cb is not None:
            self._core.callbacks.put(self._user_throttle_cb, event)
        else:
            self._serving.served_event()
