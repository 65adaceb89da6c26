"""Delivery reports the C reporter hands over (mutepro.producer.reports.ReportHandler), through a MuteProducer on
the fake librdkafka client: what each final report counts for its partition's detectors, how a probe's report
answers the breaker, and what reaches the application's callback."""

from __future__ import annotations

from confluent_kafka import KafkaError

from mutepro.mute.events import MuteEventKind
from tests.unit._producer_fakes import TOPIC, Harness


def failed_tally(h: Harness, partition: int) -> int:
    tally = h.producer._tracker.topics[TOPIC]
    return int(tally.failed[partition])


class TestFailures:
    def test_a_partitions_fault_counts_against_it_and_reaches_the_callback(self) -> None:
        h = Harness()
        h.produce(b"x", partition=2)
        h.fake.fail(TOPIC, 2, KafkaError.REQUEST_TIMED_OUT)
        h.producer.poll(0)
        assert failed_tally(h, 2) == 1
        assert [(code, m.partition()) for code, m in h.reports] == [(KafkaError.REQUEST_TIMED_OUT, 2)]
        assert h.producer.counters.failed == 1

    def test_the_messages_own_error_counts_against_nothing(self) -> None:
        """Too large: the broker answered; nothing is judged against the partition, the application is told."""
        h = Harness()
        h.produce(b"x", partition=2)
        h.fake.fail(TOPIC, 2, KafkaError.MSG_SIZE_TOO_LARGE)
        h.producer.poll(0)
        assert failed_tally(h, 2) == 0
        assert [code for code, _ in h.reports] == [KafkaError.MSG_SIZE_TOO_LARGE]

    def test_only_errors_skips_successes_but_not_failures(self) -> None:
        h = Harness(conf={"delivery.report.only.error": True})
        h.produce(b"ok", partition=1)
        h.produce(b"bad", partition=2)
        h.fake.deliver(TOPIC, 1)
        h.fake.fail(TOPIC, 2, KafkaError.REQUEST_TIMED_OUT)
        h.producer.poll(0)
        assert [code for code, _ in h.reports] == [KafkaError.REQUEST_TIMED_OUT]


class TestProbes:
    def _half_open(self, h: Harness, partition: int) -> None:
        h.warm()
        h.trip(partition)
        h.fake.deliver()
        h.producer.poll(0)
        h.tick(1.1)  # the 1 s retry interval passed: half-open
        assert partition in h.producer.mute_manager.probes.probing(TOPIC)

    def test_a_delivered_probe_unmutes(self) -> None:
        """Unkeyed messages: one is sent to the half-open partition as its probe; delivered, it closes it."""
        h = Harness()
        self._half_open(h, 1)
        for i in range(8):
            h.produce(f"m{i}".encode())
        assert h.values(1), "one unkeyed message went to the half-open partition as a probe"
        h.fake.deliver()
        h.producer.poll(0)
        h.tick()
        assert not h.producer.mute_manager.is_muted(TOPIC, 1)
        assert [e.kind for e in h.producer.mute_manager.events if e.partition == 1][-1] == MuteEventKind.UNMUTE

    def test_a_failed_probe_mutes_again(self) -> None:
        h = Harness()
        self._half_open(h, 1)
        for i in range(8):
            h.produce(f"m{i}".encode())
        assert h.values(1)
        h.fake.fail(TOPIC, 1, KafkaError.REQUEST_TIMED_OUT)
        h.producer.poll(0)
        h.tick()
        assert h.producer.mute_manager.is_muted(TOPIC, 1)
        assert [e.kind for e in h.producer.mute_manager.events if e.partition == 1][-1] == MuteEventKind.REMUTE
