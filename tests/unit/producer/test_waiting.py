"""poll(timeout) and flush(timeout) waiting (the C fast path's FastPath.poll/flush, and the Python ones): waits in
whole milliseconds, flush in the wrapped producer's own flush, queued callbacks picked up, Ctrl-C between
slices."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable, Iterator
from types import FrameType

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, Message

from mutepro import MuteProducer
from mutepro.testing.fakes import FakeInnerProducer
from tests.unit._producer_fakes import CONF, TOPIC


class _Waiting(FakeInnerProducer):
    """The fake producer, recording each wait poll()/flush() asks it for. It returns at once, as librdkafka does
    when an event of mutepro's own (statistics, an error) ends its wait: the caller must then wait again for
    what is left of its timeout."""

    def __init__(self) -> None:
        super().__init__({TOPIC: 4})
        self.waits: list[tuple[str, float]] = []
        self.meanwhile: Callable[[], None] | None = None  # what another thread does during the next wait

    def _wait(self, call: str, timeout: float | None) -> None:
        self.waits.append((call, -1.0 if timeout is None else timeout))
        if self.meanwhile is not None and timeout:
            self.meanwhile, meanwhile = None, self.meanwhile
            meanwhile()

    def poll(self, timeout: float | None = None) -> int:
        self._wait("poll", timeout)
        return super().poll(0)

    def flush(self, timeout: float | None = None) -> int:
        self._wait("flush", timeout)
        return super().flush(0)


def _producer() -> tuple[MuteProducer, _Waiting]:
    fake = _Waiting()
    p = MuteProducer(CONF, _inner_factory=fake.factory, _threads=False)
    assert not p.wait_for_topic(TOPIC, 0)
    p._load_metadata(time.monotonic())
    return p, fake


class TestWholeMilliseconds:
    def test_poll_never_asks_for_less_than_a_millisecond(self) -> None:
        """Whatever is left of poll(0.0025), less than 1 ms is not asked for: confluent-kafka truncates it to a
        poll(0), and asked again and again until the deadline that was a spin (~1 ms of CPU per poll(0.001))."""
        p, fake = _producer()
        assert p.poll(0.0025) == 0
        assert fake.waits and all(t == 0 or t >= 0.001 for _, t in fake.waits), fake.waits
        p.close(0)

    def test_flush_never_asks_for_less_than_a_millisecond(self) -> None:
        """flush(0.0025) of a message that never leaves: waits of at least 1 ms up to the deadline, then what is
        left (a flush() re-checking every 5 ms asked for 0.5 ms near its deadline)."""
        p, fake = _producer()
        p.produce(TOPIC, b"v")
        assert p.flush(0.0025) == 1
        assert all(t == 0 or t >= 0.001 for _, t in fake.waits), fake.waits
        p.purge()
        p.close(0)


class TestFastPathWaits:
    def test_flush_waits_in_the_wrapped_producers_flush(self) -> None:
        """librdkafka's own flush cuts linger.ms short: waiting in its poll, every flush() sat out the linger."""
        p, fake = _producer()
        p.produce(TOPIC, b"v")
        assert p.flush(0.002) == 1
        assert ("flush", 0.0) in fake.waits and any(c == "flush" and t > 0 for c, t in fake.waits), fake.waits
        p.purge()
        p.close(0)

    def test_flush_counts_what_is_left_like_len(self) -> None:
        """Answered in C when nothing is held: outstanding messages plus queued callbacks, as len() counts."""
        p, fake = _producer()
        for _ in range(3):
            p.produce(TOPIC, b"v")
        assert p.flush(0) == 3 == len(p)
        fake.deliver(TOPIC)
        assert p.flush(0) == 0 == len(p)
        p.close(0)

    def test_a_callback_queued_during_the_wait_is_run_by_it(self) -> None:
        """Something another thread queues while poll() waits (the driver's failed re-send, say) is run on the
        polling thread when the wait ends, and counted."""
        p, fake = _producer()
        ran: list[str] = []
        fake.meanwhile = lambda: p._callbacks.put(ran.append, "queued")
        assert p.poll(0.002) == 1 and ran == ["queued"]
        p.close(0)


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def ctrl_c_soon() -> Iterator[None]:
    """Ctrl-C 50 ms from now, from a timer signal (its handler raises KeyboardInterrupt, as SIGINT's does)."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class TestCtrlCWhileWaiting:
    """Ctrl-C while poll()/flush() wait in librdkafka (no callback running) ends the wait with KeyboardInterrupt,
    as with the plain client: the C wait looks at signals between its slices."""

    def _ignore(self, err: KafkaError | None, msg: Message) -> None:
        pass

    def test_poll(self, nowhere: str, ctrl_c_soon: None) -> None:
        p = MuteProducer({"bootstrap.servers": nowhere, "log_level": 0})
        try:
            with pytest.raises(KeyboardInterrupt):
                # each refused connection is an error event that ends a poll (as the plain client's): poll again
                for _ in range(10_000):
                    p.poll(30)
        finally:
            p.close(0)

    def test_flush(self, nowhere: str, ctrl_c_soon: None) -> None:
        p = MuteProducer({"bootstrap.servers": nowhere, "log_level": 0, "message.timeout.ms": 600_000})
        p.produce("t", b"v", on_delivery=self._ignore)
        try:
            with pytest.raises(KeyboardInterrupt):
                p.flush(30)
        finally:
            p.purge()
            p.close(0)


class TestEventsEndAWait:
    """A librdkafka error event (a refused connection) served inside poll() counts as served and ends the wait,
    with or without an application error_cb, as the plain client counts it: a loop waiting in poll() wakes as
    often with either client."""

    @pytest.mark.parametrize("client", ["plain", "mute"])
    @pytest.mark.parametrize("with_error_cb", [False, True])
    def test_a_connection_error_is_an_event_served(self, nowhere: str, client: str, with_error_cb: bool) -> None:
        errors: list[KafkaError] = []
        conf = {"bootstrap.servers": nowhere, "log_level": 0, **({"error_cb": errors.append} if with_error_cb else {})}
        p = MuteProducer(conf) if client == "mute" else confluent_kafka.Producer(conf)
        try:
            # reconnects back off from 100 ms: within 30 s of waiting an error event comes; each poll ends on one
            assert [p.poll(30) >= 1 for _ in range(3)] == [True, True, True]
            assert bool(errors) == with_error_cb
        finally:
            if client == "mute":
                p.close(0)
