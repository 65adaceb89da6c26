"""MuteProducer as a drop-in for confluent_kafka.Producer at its API surface (no broker): construction, close(),
produce_batch validation, error strings, Ctrl-C inside callbacks, silence by default.

Each behaviour here was found by running confluent-kafka-python's own producer tests against MuteProducer
(``benchmarks/conformance.py``); these tests pin them so CI, which cannot fetch those tests, guards them. Where the
real client's exact exception is the contract, the test asks the real client what it raises and compares.
"""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException, Message

from mutepro.errors import MuteproError
from mutepro.producer import MuteProducer, MuteSerializingProducer

CLOSED = "Producer has been closed"


@pytest.fixture
def nowhere() -> str:
    """A loopback address nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def make(nowhere: str) -> Iterator[Callable[..., MuteProducer]]:
    """MuteProducer factory against `nowhere`; whatever a test leaves open is closed without waiting."""
    made: list[MuteProducer] = []

    def factory(conf: dict[str, Any] | None = None, **kwargs: Any) -> MuteProducer:
        p = MuteProducer({"bootstrap.servers": nowhere, **(conf or {})}, **kwargs)
        made.append(p)
        return p

    yield factory
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for p in made:
            p.close(timeout=0)


def _real_outcome(*args: Any) -> BaseException | None:
    """What confluent_kafka.Producer itself raises for these arguments (None: it accepts them)."""
    try:
        confluent_kafka.Producer(*args)  # (not **{}: the real client takes an empty keyword dict as a config)
    except BaseException as err:
        return err
    return None


def _wait(predicate: Callable[[], bool], producer: MuteProducer, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        producer.poll(0.05)
    return True


class TestConstruction:
    @pytest.mark.parametrize(
        "args", [(), (None,), ("bootstrap.servers=x",), ([],)], ids=["none", "None", "str", "list"]
    )
    def test_missing_or_non_dict_config_raises_type_error(self, args: tuple[Any, ...]) -> None:
        """Producer(), Producer(None), Producer("...") raise TypeError('expected configuration dict...')."""
        assert isinstance(_real_outcome(*args), TypeError)
        with pytest.raises(TypeError, match="expected configuration dict"):
            MuteProducer(*args)

    def test_config_as_keyword_arguments(self, nowhere: str) -> None:
        """Producer(**conf) and Producer(conf, key=value) work, keywords overriding the dict."""
        p = MuteProducer(**{"bootstrap.servers": nowhere, "client.id": "kw"})
        assert p.close() is True
        with pytest.raises(KafkaException) as exc:
            MuteProducer({"bootstrap.servers": nowhere, "partitioner": "murmur2"}, partitioner="murmur")
        assert exc.value.args[0].code() == KafkaError._INVALID_ARG  # the keyword won, and reached librdkafka

    def test_logger_keyword_reaches_librdkafka(self, nowhere: str) -> None:
        """Producer(conf, logger=...) hands librdkafka's log lines to that logger, as the real client does."""
        seen: list[logging.LogRecord] = []
        logger = logging.getLogger("test_dropin.librdkafka")
        logger.setLevel(logging.DEBUG)
        logger.addFilter(lambda record: seen.append(record) is None)
        p = MuteProducer({"bootstrap.servers": nowhere, "debug": "broker"}, logger=logger)
        assert _wait(lambda: bool(seen), p)
        p.close(timeout=0)

    @pytest.mark.parametrize(
        "conf",
        [
            {"partitioner": "murmur"},
            {"no.such.property": 1},
            {"message.timeout.ms": -1},
            {"error_cb": 1},
            {"stats_cb": "x"},
            {"throttle_cb": 1},
            {"on_delivery": 1},
            {"delivery.report.only.error": "true"},
        ],
        ids=lambda c: next(iter(c)),
    )
    def test_refused_settings_raise_what_the_real_client_raises(self, conf: dict[str, Any]) -> None:
        """A setting the real client refuses raises the same exception type with the same message."""
        real = _real_outcome(conf)
        assert real is not None
        with pytest.raises(type(real)) as exc:
            MuteProducer(conf)
        assert str(exc.value) == str(real)
        if isinstance(real, KafkaException):
            assert exc.value.args[0].code() == real.args[0].code() == KafkaError._INVALID_ARG

    @pytest.mark.parametrize(
        "conf",
        [{"message.timeout.ms": 10}, {"message.timeout.ms": 1000}, {"delivery.timeout.ms": 500}],
        ids=["10ms", "at-threshold", "alias"],
    )
    def test_short_message_timeouts_are_accepted_and_slow_call_disabled_once(
        self, make: Callable[..., MuteProducer], conf: dict[str, Any], caplog: pytest.LogCaptureFixture
    ) -> None:
        """A timeout at or below slow_call.threshold_ms (1000 ms) is accepted; the rule is off, said once."""
        with caplog.at_level(logging.WARNING, logger="mutepro.producer"):
            p = make(conf)
        said = [r for r in caplog.records if getattr(r, "mutepro", {}).get("event") == "slow_call_disabled"]
        assert len(said) == 1 and said[0].name == "mutepro.producer"
        assert p.mute_manager is not None

    @pytest.mark.parametrize("timeout_ms", [0, 300_000])
    def test_infinite_or_long_timeout_keeps_slow_call(
        self, make: Callable[..., MuteProducer], timeout_ms: int, caplog: pytest.LogCaptureFixture
    ) -> None:
        """message.timeout.ms 0 (librdkafka's "never") or above the threshold leaves the slow-call rule on."""
        with caplog.at_level(logging.WARNING, logger="mutepro.producer"):
            make({"message.timeout.ms": timeout_ms})
        assert not [r for r in caplog.records if "slow_call" in r.getMessage()]

    def test_mutepro_settings_still_validated_apart(self) -> None:
        """mutepro's own settings keep their own checks (a bad policy is mutepro's ConfigError/PolicyError)."""
        from mutepro.errors import MuteproError

        with pytest.raises(MuteproError):
            MuteProducer({"mutepro.policy": "x"})


class TestClose:
    def test_close_returns_true_and_everything_after_raises(self, make: Callable[..., MuteProducer]) -> None:
        """close() is True (twice too); then produce/poll/flush/purge/batch/transactions raise RuntimeError."""
        p = make()
        assert p.close() is True
        assert p.close() is True
        calls: list[Callable[[], Any]] = [
            lambda: p.produce("t", b"v"),
            lambda: p.produce("t", b"v", partition=0),
            lambda: p.poll(0),
            lambda: p.flush(0),
            lambda: p.purge(),
            lambda: p.produce_batch("t", [{"value": b"v"}]),
            lambda: p.init_transactions(0.1),
            lambda: p.begin_transaction(),
            lambda: p.commit_transaction(0.1),
            lambda: p.abort_transaction(0.1),
        ]
        for call in calls:
            with pytest.raises(RuntimeError, match=CLOSED):
                call()
        with pytest.raises(RuntimeError):
            p.list_topics(timeout=0.1)
        assert len(p) == 0 and bool(p)
        assert p.produce_batch("t", []) == 0  # an empty batch is checked before the handle, as in the real one

    def test_close_delivers_outstanding_reports(self, make: Callable[..., MuteProducer]) -> None:
        """close() waits for every message and runs its callback (here: timed out), like the real close()."""
        reports: list[KafkaError | None] = []
        p = make({"message.timeout.ms": 10})
        p.produce("t", b"v", callback=lambda err, msg: reports.append(err))
        assert p.close() is True
        assert len(reports) == 1 and reports[0] is not None and reports[0].code() == KafkaError._MSG_TIMED_OUT

    def test_close_with_a_timeout_purges_what_is_left_and_warns(self, make: Callable[..., MuteProducer]) -> None:
        """close(timeout) bounds the wait: what is left is purged (callbacks run) and a RuntimeWarning says so."""
        reports: list[KafkaError | None] = []
        p = make({"message.timeout.ms": 60_000})
        p.produce("t", b"v", callback=lambda err, msg: reports.append(err))
        with pytest.warns(RuntimeWarning, match="Producer flush failed during close"):
            assert p.close(timeout=0) is True
        assert len(reports) == 1 and reports[0] is not None
        assert reports[0].code() in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)

    def test_context_manager_closes(self, make: Callable[..., MuteProducer]) -> None:
        """`with` returns the producer itself and closes it; __exit__ returns None (exceptions propagate)."""
        p = make({"message.timeout.ms": 10})
        with p as entered:
            assert entered is p
            p.produce("t", b"v")
        with pytest.raises(RuntimeError, match=CLOSED):
            p.produce("t", b"v")
        assert p.__exit__(None, None, None) is None

    def test_dropped_without_close_its_threads_end(self, nowhere: str) -> None:
        """A producer the application drops without close() is collected and its threads end, like the plain
        client's handle (they see it through a weak proxy)."""
        import gc
        import threading

        p = MuteProducer({"bootstrap.servers": nowhere, "log_level": 0})
        prefix = f"{p.name}-"
        assert any(t.name.startswith(prefix) for t in threading.enumerate())
        del p
        deadline = time.monotonic() + 20
        while any(t.name.startswith(prefix) for t in threading.enumerate()) and time.monotonic() < deadline:
            gc.collect()
            time.sleep(0.05)
        assert not [t.name for t in threading.enumerate() if t.name.startswith(prefix)]

    def test_uninitialised_subclass_behaves_closed(self) -> None:
        """A subclass that skips super().__init__() raises RuntimeError everywhere, len() 0 (no AttributeError)."""

        class Uninitialised(MuteProducer):
            def __init__(self, config: dict[str, Any]) -> None:
                pass

        p = Uninitialised({})
        for call in (
            lambda: p.produce("t", value=b"v"),
            lambda: p.poll(),
            lambda: p.flush(),
            lambda: p.purge(),
            lambda: p.produce_batch("t", [{"value": b"v"}]),
            lambda: p.init_transactions(),
            lambda: p.abort_transaction(),
        ):
            with pytest.raises(RuntimeError, match=CLOSED):
                call()
        assert len(p) == 0


class TestProduceBatch:
    @pytest.mark.parametrize(
        "messages,error",
        [
            ("not_a_list", "messages must be a list"),
            ({"not": "list"}, "messages must be a list"),
            ([{"value": b"good"}, "not_dict"], "Message at index 1 must be a dict"),
            ([{"value": 123}], "Message value at index 0 must be bytes or str"),
            ([{"value": b"good", "key": ["invalid"]}], "Message key at index 0 must be bytes or str"),
            ([{"value": b"good", "partition": "invalid"}], "Message partition at index 0 must be int"),
        ],
    )
    def test_invalid_input_raises_the_real_type_errors(
        self, make: Callable[..., MuteProducer], messages: Any, error: str
    ) -> None:
        """Bad input raises the real client's TypeError, before any message of the batch is sent."""
        p = make()
        with pytest.raises(TypeError, match=error):
            p.produce_batch("t", messages)
        assert len(p) == 0

    def test_timestamp_is_not_implemented_and_nothing_is_sent(self, make: Callable[..., MuteProducer]) -> None:
        """A timestamp in a batch message raises NotImplementedError, as librdkafka's batch call has none."""
        p = make()
        with pytest.raises(NotImplementedError, match="Message timestamps are not currently supported"):
            p.produce_batch("t", [{"value": b"a"}, {"value": b"b", "timestamp": 1234567890}])
        assert len(p) == 0

    def test_bad_arguments_raise_type_error(self, make: Callable[..., MuteProducer]) -> None:
        """A non-str topic, a non-int partition or an unknown keyword raise TypeError."""
        p = make()
        for call in (
            lambda: p.produce_batch(None, [{"value": b"x"}]),
            lambda: p.produce_batch(123, [{"value": b"x"}]),
            lambda: p.produce_batch("t", [{"value": b"x"}], partition="invalid"),
            lambda: p.produce_batch("t", [{"value": b"x"}], timestamp=1),
        ):
            with pytest.raises(TypeError):
                call()

    def test_rejected_messages_get_a_kafka_error(self, make: Callable[..., MuteProducer]) -> None:
        """A message librdkafka refuses (queue full, too large) is not counted and gets a KafkaError `_error`."""
        p = make({"queue.buffering.max.messages": 1, "message.max.bytes": 1000})
        batch: list[dict[str, Any]] = [{"value": b"small"}, {"value": b"x" * 2000}, {"value": b"tiny"}]
        assert p.produce_batch("t", batch) == 1
        assert "_error" not in batch[0]
        errors = [m["_error"] for m in batch[1:]]
        assert all(type(e) is KafkaError for e in errors)
        assert {e.code() for e in errors} == {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError._QUEUE_FULL}
        assert errors[1].str() == "Message failed: Local: Queue full"

    def test_callbacks_per_message_and_for_the_batch(self, make: Callable[..., MuteProducer]) -> None:
        """A message's own callback wins over the batch's (positional or callback=/on_delivery=)."""
        got: dict[str, list[bytes]] = {"own": [], "batch": [], "alias": []}
        p = make({"message.timeout.ms": 10})

        def cb(name: str) -> Callable[[KafkaError | None, Message], None]:
            return lambda err, msg: got[name].append(msg.value())  # type: ignore[arg-type]

        batch = [{"value": b"1", "callback": cb("own")}, {"value": b"2"}, {"value": b"3", "headers": {"h": b"v"}}]
        assert p.produce_batch("t", batch, -1, cb("batch")) == 3
        assert p.produce_batch("t", [{"value": b"4"}], on_delivery=cb("alias")) == 1
        assert p.flush(20) == 0
        assert got == {"own": [b"1"], "batch": [b"2", b"3"], "alias": [b"4"]}


class TestErrors:
    def test_timed_out_delivery_reports_librdkafkas_error(self, make: Callable[..., MuteProducer]) -> None:
        """A message that times out reports _MSG_TIMED_OUT with librdkafka's string 'Local: Message timed out'."""
        errors: list[KafkaError] = []
        p = make({"message.timeout.ms": 10})
        p.produce("t", b"v", callback=lambda err, msg: errors.append(err))  # type: ignore[arg-type]
        assert p.flush(20) == 0
        assert errors[0].code() == KafkaError._MSG_TIMED_OUT and errors[0].str() == "Local: Message timed out"

    def test_callback_exception_propagates_from_flush(self, make: Callable[..., MuteProducer]) -> None:
        """An exception raised by a delivery callback comes out of flush() as itself (no SystemError)."""

        def boom(err: KafkaError | None, msg: Message) -> None:
            raise RuntimeError("from the callback")

        p = make({"message.timeout.ms": 10, "on_delivery": boom})
        p.produce("t", b"v")
        with pytest.raises(RuntimeError, match="from the callback"):
            p.flush(20)


class TestInterrupts:
    @pytest.mark.usefixtures("ctrl_c_handled")
    def test_ctrl_c_inside_a_delivery_callback_is_a_keyboard_interrupt(
        self, make: Callable[..., MuteProducer]
    ) -> None:
        """SIGINT handled while a delivery callback runs surfaces from flush() as KeyboardInterrupt."""

        def interrupted(err: KafkaError | None, msg: Message) -> None:
            signal.raise_signal(signal.SIGINT)
            _ = msg  # the handler runs here, at the next bytecode, raising a bare KeyboardInterrupt

        p = make({"message.timeout.ms": 10})
        p.produce("t", b"v", callback=interrupted)
        with pytest.raises(KeyboardInterrupt):
            p.flush(20)


class TestPollZero:
    """poll(0), a busy writer's call (confluent-kafka's README polls before every produce): served in C on the
    fast path, with what the Python poll guarantees."""

    def _poll_until(self, p: MuteProducer, done: Callable[[], bool], limit_s: float = 20.0) -> int:
        served = 0
        deadline = time.monotonic() + limit_s
        while not done() and time.monotonic() < deadline:
            served += p.poll(0)
        return served

    def test_callbacks_run_inside_poll_0_and_are_counted(self, make: Callable[..., MuteProducer]) -> None:
        """Every delivery callback runs inside a poll(0) call, and poll(0) returns how many callbacks ran: the
        delivery reports and, as with the plain client, the error events (refused connections) served meanwhile."""
        inside = {"now": False}
        seen: list[bool] = []
        errors: list[KafkaError] = []

        def cb(err: KafkaError | None, msg: Message) -> None:
            seen.append(inside["now"])

        p = make({"message.timeout.ms": 10, "error_cb": errors.append})
        for _ in range(3):
            p.produce("t", b"v", callback=cb)
        served = 0
        deadline = time.monotonic() + 20
        while len(seen) < 3 and time.monotonic() < deadline:
            inside["now"] = True
            served += p.poll(0)
            inside["now"] = False
        assert seen == [True, True, True] and served == 3 + len(errors)

    def test_poll_0_inside_a_callback_serves_nothing(self, make: Callable[..., MuteProducer]) -> None:
        """From inside a delivery callback, poll(0) returns 0 and the other reports still come, in order."""
        nested: list[int] = []
        order: list[int] = []

        def cb(err: KafkaError | None, msg: Message) -> None:
            nested.append(p.poll(0))
            order.append(int(msg.value()))

        p = make({"message.timeout.ms": 10})
        for i in range(3):
            p.produce("t", str(i).encode(), callback=cb)
        self._poll_until(p, lambda: len(order) == 3)
        assert nested == [0, 0, 0] and order == [0, 1, 2]

    @staticmethod
    def _quiet(make: Callable[..., MuteProducer]) -> MuteProducer:
        """A producer with nothing left to serve: its one connection attempt's error events (refused, all brokers
        down) served, and no reconnect for an hour. poll() counts error events as the plain client does."""
        p = make({"reconnect.backoff.ms": 3_600_000, "reconnect.backoff.max.ms": 3_600_000})
        for _ in range(50):  # bounded: the first attempt's two or three events come within milliseconds
            if p.poll(0.2) == 0:
                break
        return p

    def test_poll_0_after_close_and_after_a_driver_failure_raises(self, make: Callable[..., MuteProducer]) -> None:
        """A failed driver surfaces from poll(0) as MuteproError; a closed producer raises RuntimeError."""
        p = self._quiet(make)
        p._driver_error = RuntimeError("boom")
        if p._fast is not None:
            p._fast.broken = 1
        with pytest.raises(MuteproError, match="boom"):
            p.poll(0)
        p._driver_error = None
        if p._fast is not None:
            p._fast.broken = 0
        assert p.poll(0) == 0
        p.close(timeout=0)
        with pytest.raises(RuntimeError, match=CLOSED):
            p.poll(0)

    def test_keyword_and_float_zero_behave_like_zero(self, make: Callable[..., MuteProducer]) -> None:
        """poll(timeout=0), poll(0.0) and poll(0) all serve one round without waiting."""
        p = self._quiet(make)
        assert p.poll(timeout=0) == 0 and p.poll(0.0) == 0 and p.poll(0) == 0
        if p._fast is not None:  # the C path answers poll(0) itself
            assert getattr(p.poll, "__self__", None) is p._fast

    @pytest.mark.usefixtures("ctrl_c_handled")
    def test_ctrl_c_inside_a_callback_surfaces_from_poll_0(self, make: Callable[..., MuteProducer]) -> None:
        """SIGINT handled while a delivery callback runs inside poll(0) surfaces as KeyboardInterrupt."""

        def interrupted(err: KafkaError | None, msg: Message) -> None:
            signal.raise_signal(signal.SIGINT)
            _ = msg

        p = make({"message.timeout.ms": 10})
        p.produce("t", b"v", callback=interrupted)
        with pytest.raises(KeyboardInterrupt):
            self._poll_until(p, lambda: False, limit_s=20.0)


class TestLogging:
    def test_silent_unless_the_application_configures_logging(self, nowhere: str) -> None:
        """With no logging configured, client errors print nothing (structlog's default would print to stdout)."""
        script = textwrap.dedent(
            f"""
            import time
            from mutepro.producer import MuteProducer
            errors = []
            p = MuteProducer({{"bootstrap.servers": "{nowhere}", "error_cb": errors.append, "log_level": 0}})
            deadline = time.monotonic() + 20
            while not errors and time.monotonic() < deadline:
                p.poll(0.05)
            assert errors, "no client error seen"
            p.close(timeout=0)
            print("done")
            """
        )
        out = subprocess.run(
            [sys.executable, "-P", "-c", script], capture_output=True, text=True, timeout=60, check=False,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == "done\n"
        assert out.stderr == ""

    def test_events_are_stdlib_records_with_their_fields(
        self, make: Callable[..., MuteProducer], caplog: pytest.LogCaptureFixture
    ) -> None:
        """Configured, mutepro's events arrive as `mutepro.*` records carrying the event as a dict."""
        errors: list[KafkaError] = []
        with caplog.at_level(logging.WARNING, logger="mutepro"):
            p = make({"error_cb": errors.append})
            assert _wait(lambda: bool(errors), p)
        records = [r for r in caplog.records if getattr(r, "mutepro", {}).get("event") == "client_error"]
        assert records and records[0].name == "mutepro.producer" and records[0].levelno == logging.WARNING
        assert records[0].mutepro["producer"] == p.name  # type: ignore[attr-defined]
        assert records[0].getMessage().startswith("client_error ")


def _undocumented(cls: type) -> list[str]:
    """Members of ``cls``'s own namespace (dunders aside) whose docstring is missing or has no ":", the rule of
    confluent-kafka's ``tests/test_docs.py``, which walks the swapped ``confluent_kafka.Producer`` too: private
    members count, inherited ones do not, and a plain value is judged by its type's docstring."""
    bad = []
    for name, member in vars(cls).items():
        if name.startswith("__") or member is None or isinstance(member, type(sys)):
            continue
        if ":" not in (member.__doc__ or ""):
            bad.append(name)
    return bad


class TestDocumented:
    @pytest.mark.parametrize("cls", [MuteProducer, MuteSerializingProducer], ids=lambda c: c.__name__)
    def test_every_member_has_a_docstring_with_a_field(self, cls: type) -> None:
        """Every member confluent-kafka's docs test sees has a docstring it accepts."""
        assert _undocumented(cls) == []

    def test_the_rule_catches_a_bare_member(self) -> None:
        """The check above can fail: a method without a docstring and a bare class-level value are caught."""

        class Bare(MuteProducer):
            flag = True

            def helper(self) -> None:
                pass

        assert _undocumented(Bare) == ["flag", "helper"]
