"""The aio producer's delivery callbacks resolve their futures on the futures' own loop
(mutepro.aio.batching.on_loop_of): at once on the loop's thread, handed over from any other, in call order, and
dropped quietly once the loop is closed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from mutepro.aio.batching import on_loop_of


class TestOnLoopOf:
    def test_on_the_loops_thread_the_callback_runs_at_once(self) -> None:
        async def main() -> list[Any]:
            seen: list[Any] = []
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            on_loop_of(future, lambda err, msg: seen.append((err, msg)))(None, "m")
            return seen  # before any await: ran inline

        assert asyncio.run(main()) == [(None, "m")]

    def test_from_another_thread_it_runs_on_the_loop_in_call_order(self) -> None:
        async def main() -> tuple[list[Any], set[int]]:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[Any] = loop.create_future()
            seen: list[Any] = []
            threads: set[int] = set()

            def callback(err: Any, msg: Any) -> None:
                seen.append(msg)
                threads.add(threading.get_ident())
                if msg == 2:
                    future.set_result(msg)

            wrapped = on_loop_of(future, callback)
            worker = threading.Thread(target=lambda: [wrapped(None, i) for i in range(3)])
            worker.start()
            await asyncio.wait_for(future, 10)  # resolved on the loop: the await wakes without anything else
            worker.join()
            return seen, threads

        seen, threads = asyncio.run(main())
        assert seen == [0, 1, 2] and threads == {threading.main_thread().ident}

    def test_a_closed_loop_drops_the_notification(self) -> None:
        loop = asyncio.new_event_loop()
        future: asyncio.Future[Any] = loop.create_future()
        seen: list[Any] = []
        wrapped = on_loop_of(future, lambda err, msg: seen.append(msg))
        loop.close()
        wrapped(None, "late")  # no RuntimeError from the closed loop
        assert seen == []
