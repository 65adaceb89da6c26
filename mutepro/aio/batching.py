"""The batch buffer of :class:`mutepro.aio.AIOProducer`: confluent-kafka's ``ProducerBatchManager`` whose
per-message delivery callbacks resolve their futures on the futures' own event loop.

Why: the callback confluent-kafka assigns sets the ``asyncio.Future`` directly, on whatever thread runs it.
With the plain client that is an executor thread inside ``poll()``/``flush()``; with a MuteProducer it can also
be the thread that serves a held message's release or a rescued message's re-send report. ``asyncio.Future`` is
not thread-safe: set from another thread, its waiters are scheduled with ``call_soon`` on a loop that may be
asleep (the ``await`` then hangs until something else wakes the loop) or racing with it. So every callback is
wrapped, not replaced: the original still decides the outcome (``set_result(msg)`` or
``set_exception(KafkaException(err))``); the wrapper only moves it onto the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from confluent_kafka.aio.producer._message_batch import MessageBatch
from confluent_kafka.aio.producer._producer_batch_processor import ProducerBatchManager

#: ``(err, msg) -> None``: a delivery callback as confluent-kafka calls it.
DeliveryCallback = Callable[[Any, Any], None]


class LoopSafeBatchManager(ProducerBatchManager):
    """``ProducerBatchManager`` whose batches' callbacks resolve each future on its event loop (see the module
    docstring). Same constructor and API as the base class."""

    def create_batches(self, target_topic: str | None = None) -> list[MessageBatch]:
        """The base class's batches, each message's ``callback`` wrapped by :func:`on_loop_of` its future."""
        batches: list[MessageBatch] = super().create_batches(target_topic)
        for batch in batches:
            for message, future in zip(batch.messages, batch.futures, strict=True):
                callback = message.get("callback")
                if callback is not None:
                    message["callback"] = on_loop_of(future, callback)
        return batches


def on_loop_of(future: asyncio.Future[Any], callback: DeliveryCallback) -> DeliveryCallback:
    """``callback`` made safe to call from any thread: run at once on ``future``'s loop thread, else handed to
    that loop with ``call_soon_threadsafe`` (in call order: the loop runs them first in, first out, so every
    future resolved during an executor call is done before that call's own result reaches the awaiting task)."""
    loop = future.get_loop()

    def run_on_loop(err: Any, msg: Any) -> None:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # not on a thread running a loop
            running = None
        if running is loop:
            callback(err, msg)
            return
        # RuntimeError: the loop is closed, nothing can await this future any more. The message's fate is settled
        # in librdkafka either way; only the notification has no one left to reach.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback, err, msg)

    return run_on_loop
