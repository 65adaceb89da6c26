"""confluent_kafka.Producer's API surface, where MuteProducer must behave exactly like it (a drop-in).

What lives here is what the real client does at its edges — which arguments its constructor takes, what it
raises once closed, how ``produce_batch`` validates its input and reports rejected messages, which settings it
accepts — measured against confluent-kafka-python's own unit tests (``benchmarks/conformance.py``) and pinned in
``tests/unit/test_dropin.py``. Everything else (routing, muting) is MuteProducer's own business.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn, TypeVar

from confluent_kafka import KafkaError

from mutepro.policy.checks import ClientLimits, limits_of, slow_call_out_of_reach
from mutepro.policy.effective import Policy
from mutepro.policy.schema import TopicPolicy

#: the message confluent_kafka.Producer raises ``RuntimeError`` with once closed (or never initialised)
CLOSED = "Producer has been closed"

_log = logging.getLogger("mutepro.producer")
_F = TypeVar("_F", bound=Callable[..., Any])


def closed_error() -> RuntimeError:
    return RuntimeError(CLOSED)


def check_timeout(timeout: object) -> None:
    """``poll(timeout)`` / ``flush(timeout)``: a real number, as the plain client's argument parser insists
    (``poll(None)`` there is ``TypeError: must be real number, not NoneType``; -1 is the way to say forever)."""
    if not isinstance(timeout, int | float):
        raise TypeError(f"must be real number, not {type(timeout).__name__}")


def check_partition(partition: object) -> None:
    """``produce(partition=...)``: an integer, as the plain client requires (-1: the partitioner's choice)."""
    if not isinstance(partition, int):
        raise TypeError(f"'{type(partition).__name__}' object cannot be interpreted as an integer")


def config_from_args(config: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The librdkafka config of ``Producer(conf)``, ``Producer(**conf)`` or ``Producer(conf, key=value)``.

    A copy (the caller's dict is never touched); keyword arguments override the dict, as in the real client.
    """
    if config is None:
        if not kwargs:
            raise TypeError("expected configuration dict")
        return dict(kwargs)
    if not isinstance(config, Mapping):
        raise TypeError(f"expected configuration dict, got {type(config).__name__}")
    return {**config, **kwargs}


# -- message timeouts and the slow-call rule ----------------------------------------------------------------


def message_timeout_ms(conf: Mapping[str, Any]) -> int:
    """librdkafka's ``message.timeout.ms`` (alias ``delivery.timeout.ms``); 0 means no timeout. Read as
    ``mutepro config check`` reads it (:func:`mutepro.policy.checks.limits_of`)."""
    return limits_of(conf).message_timeout_ms


def adapt_slow_call(policy: Policy | TopicPolicy, timeout_ms: int) -> Policy | TopicPolicy:
    """The policy with the slow-call rule off wherever ``slow_call.threshold_ms`` is not below the message
    timeout: no message can be slow before it times out there, so the rule could never see anything.

    Every config the real client takes must work (``message.timeout.ms: 10`` in tests, ``0`` for "never time
    out"), so this adapts instead of refusing; it says so once, on the ``mutepro.producer`` logger.
    """
    limits = ClientLimits(message_timeout_ms=timeout_ms)
    if timeout_ms <= 0:
        return policy  # no timeout: any threshold can be crossed

    def adapt(tp: TopicPolicy) -> TopicPolicy:
        # the same rule ``mutepro config check`` reports (there as an issue: a drop-in must accept the config)
        if not slow_call_out_of_reach(tp, limits):
            return tp
        return tp.model_copy(update={"slow_call": tp.slow_call.model_copy(update={"enabled": False})})

    if isinstance(policy, TopicPolicy):
        adapted: Policy | TopicPolicy = adapt(policy)
        changed = adapted is not policy
        threshold = policy.slow_call.threshold_ms
    else:
        topics = {name: adapt(tp) for name, tp in policy.topics.items()}
        defaults = adapt(policy.defaults)
        changed = defaults is not policy.defaults or any(topics[n] is not tp for n, tp in policy.topics.items())
        if not changed:
            return policy
        document = policy._document.model_copy(update={"defaults": defaults})
        adapted = Policy(document, topics, policy.sources)
        threshold = max(tp.slow_call.threshold_ms for tp in _all_topic_policies(policy) if tp.slow_call.enabled)
    if changed:
        _log.warning(
            "slow_call disabled: message.timeout.ms (%d ms) is not above slow_call.threshold_ms (%d ms), so no "
            "message could be slow before it times out; lower slow_call.threshold_ms to keep the rule",
            timeout_ms, threshold,
            extra={"mutepro": {"event": "slow_call_disabled", "timeout_ms": timeout_ms, "threshold_ms": threshold}},
        )
    return adapted


def _all_topic_policies(policy: Policy) -> Iterable[TopicPolicy]:
    yield policy.defaults
    yield from policy.topics.values()


# -- produce_batch -------------------------------------------------------------------------------------------


class BatchMessage:
    """One validated message of a ``produce_batch`` list."""

    __slots__ = ("callback", "key", "partition", "value")

    def __init__(self, value: Any, key: Any, partition: int, callback: Any) -> None:
        self.value = value
        self.key = key
        self.partition = partition
        self.callback = callback


def _text_or_bytes(obj: Any) -> bool:
    return obj is None or isinstance(obj, bytes | str)


def validate_batch(messages: Any, partition: int, callback: Any) -> list[BatchMessage]:
    """Check every message first, as the real client does, so a bad one rejects the whole batch before any
    is sent: the same exception types and messages (``TypeError: Message value at index 0 must be bytes or
    str``...). ``headers`` are checked and then dropped, and a ``timestamp`` raises ``NotImplementedError``:
    the real ``produce_batch`` does both (librdkafka's batch call carries neither)."""
    if not isinstance(messages, list):
        raise TypeError("messages must be a list")
    batch: list[BatchMessage] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise TypeError(f"Message at index {i} must be a dict")
        value, key = m.get("value"), m.get("key")
        if not _text_or_bytes(value):
            raise TypeError(f"Message value at index {i} must be bytes or str")
        if not _text_or_bytes(key):
            raise TypeError(f"Message key at index {i} must be bytes or str")
        p = m.get("partition")
        if p is not None and not isinstance(p, int):
            raise TypeError(f"Message partition at index {i} must be int")
        if m.get("timestamp") is not None:
            raise NotImplementedError("Message timestamps are not currently supported in batch mode")
        headers = m.get("headers")
        if headers is not None and not _valid_headers(headers):
            raise ValueError(f"Invalid headers at index {i}")
        cb = m.get("callback")
        batch.append(BatchMessage(value, key, partition if p is None else p, cb if cb is not None else callback))
    return batch


def _valid_headers(headers: Any) -> bool:
    items: Iterable[Any]
    if isinstance(headers, Mapping):
        items = headers.items()
    elif isinstance(headers, list | tuple):
        items = headers
    else:
        return False
    for item in items:
        if not isinstance(item, tuple | list) or len(item) != 2 or not isinstance(item[0], str):
            return False
        if not _text_or_bytes(item[1]):
            return False
    return True


def batch_error(code: int) -> KafkaError:
    """The ``_error`` the real client sets on a rejected batch message: a ``KafkaError``, not an exception."""
    return KafkaError(code, f"Message failed: {KafkaError(code).str()}")


def error_code(err: BaseException) -> int:
    """The librdkafka error code of what ``produce()`` raised for one message."""
    if isinstance(err, BufferError):
        return KafkaError._QUEUE_FULL
    first = err.args[0] if err.args else None
    return first.code() if isinstance(first, KafkaError) else KafkaError._INVALID_ARG



# -- Ctrl-C inside a librdkafka callback ----------------------------------------------------------------------

#: what CPython says when a C function (confluent-kafka's poll/flush) returns an error without an exception
_LOST = "returned NULL without setting an exception"


def reraise_lost_interrupt(err: BaseException) -> NoReturn:
    """Raise what :func:`surfaces_interrupts` makes of ``err`` (the C fast path's ``poll`` calls it)."""
    if isinstance(err, SystemError) and _LOST in str(err):
        raise KeyboardInterrupt("interrupted inside a librdkafka callback") from err
    raise err


#: for the C fast path's poll: None where confluent-kafka keeps the whole exception (Python >= 3.12)
LOST_INTERRUPT_CONVERTER = None if sys.version_info >= (3, 12) else reraise_lost_interrupt


def surfaces_interrupts(method: _F) -> _F:
    """Turn confluent-kafka's lost ``KeyboardInterrupt`` back into one (Python < 3.12).

    When Ctrl-C lands while a Python callback runs inside librdkafka's poll, the signal handler raises
    ``KeyboardInterrupt`` in that callback as a bare type, not an instance. confluent-kafka keeps only the
    *instance* of a callback's exception on Pythons before 3.12 (``PyErr_Fetch``), which is ``NULL`` then: its
    poll()/flush() return an error with no exception set, and CPython reports ``SystemError: ... returned NULL
    without setting an exception``. (The plain client does the same with a callback that has no ``try``; with
    MuteProducer much more Python runs inside librdkafka's poll, so Ctrl-C lands there often.) A bare-type
    exception at an arbitrary point of Python code is what a signal handler raises, so that exact SystemError
    becomes the ``KeyboardInterrupt`` it was, chained to it.
    """
    if sys.version_info >= (3, 12):
        return method  # confluent-kafka keeps the whole raised exception there

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except SystemError as err:
            reraise_lost_interrupt(err)

    return wrapper  # type: ignore[return-value]
