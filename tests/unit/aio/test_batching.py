"""The batch buffer of mutepro.aio.AIOProducer (mutepro.aio.batching): each message's delivery callback resolves
its future on the future's own event loop, whichever thread calls it."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mutepro.aio import AIOProducer
from mutepro.aio.batching import on_loop_of
from tests.unit._producer_fakes import TOPIC, Harness


@pytest.mark.asyncio
class TestOnLoopOf:
    async def test_a_callback_from_another_thread_resolves_the_future_on_its_loop(self) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        seen: list[int] = []

        def resolve(err: Any, msg: Any) -> None:
            seen.append(threading.get_ident())
            future.set_result(msg)

        worker = threading.Thread(target=on_loop_of(future, resolve), args=(None, "msg"))
        worker.start()
        worker.join()
        assert await asyncio.wait_for(future, 5) == "msg"
        assert seen == [threading.get_ident()]  # ran on the loop's thread, not the worker's

    async def test_batches_carry_callbacks_that_resolve_on_the_loop(self, harness: Harness) -> None:
        """A batch's callback called from an executor thread leaves the future to the loop: not done when the
        thread returns (confluent-kafka's bare callback would have set it right there, off the loop), done once it
        runs."""
        p = AIOProducer(
            {"bootstrap.servers": "unused"}, max_workers=1, buffer_timeout=0, batch_size=100,
            producer_factory=lambda conf, **_: harness.producer,
        )
        future = await p.produce(TOPIC, b"x")
        [batch] = p._batch_processor.create_batches()
        worker = threading.Thread(target=batch.messages[0]["callback"], args=(None, "delivered"))
        worker.start()
        worker.join()
        assert not future.done()
        assert await asyncio.wait_for(future, 5) == "delivered"
        p._batch_processor.clear_buffer()
        await p.close()

    async def test_on_the_loops_own_thread_it_runs_at_once(self) -> None:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        on_loop_of(future, lambda err, msg: future.set_result(msg))(None, "now")
        assert future.done() and future.result() == "now"


class TestClosedLoop:
    def test_a_callback_for_a_closed_loop_is_dropped_quietly(self) -> None:
        """Nothing can await the future any more: no RuntimeError reaches the thread serving the report."""
        loop = asyncio.new_event_loop()
        future: asyncio.Future[Any] = loop.create_future()
        called: list[Any] = []
        wrapped = on_loop_of(future, lambda err, msg: called.append(msg))
        loop.close()
        wrapped(None, "late")
        assert called == [] and not future.done()
