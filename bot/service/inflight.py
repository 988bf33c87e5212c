"""Work in flight, so a shutdown can finish it instead of cutting a reply off mid-way.

Listeners start the work that follows an ack with `spawn()` (or wrap it in `track()`); on SIGTERM
the service stops taking new commands and waits (up to a deadline) until nothing is tracked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)


class InFlight:
    """A count of running pieces of work, and an event that is set while there are none."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.draining = False

    @property
    def count(self) -> int:
        return self._count

    @contextmanager
    def track(self) -> Iterator[None]:
        """Count the enclosed work as in flight until it ends, however it ends."""
        self._begin()
        try:
            yield
        finally:
            self._end()

    def spawn(
        self, work: Coroutine[Any, Any, None], *, first_time: Awaitable[bool] | None = None
    ) -> asyncio.Task[None]:
        """Run `work` in a task of its own, in flight from this call until it ends.

        Listeners ack and return at once (the app runs with `process_before_response`, so the
        ack leaves as soon as the listener returns) and do the slow part here. An exception
        escaping `work` is logged, never lost. With `first_time` (whether the request is new on
        every replica, `bot.service.signing.SeenRequests`), `work` runs only if it says so.
        """
        self._begin()
        if first_time is not None:
            work = _unless_replayed(work, first_time)
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._end()
        if not task.cancelled() and task.exception() is not None:
            log.error("work after an ack failed", exc_info=task.exception())

    def _begin(self) -> None:
        self._count += 1
        self._idle.clear()

    def _end(self) -> None:
        self._count -= 1
        if self._count == 0:
            self._idle.set()

    async def wait_idle(self, deadline: float) -> bool:
        """Wait up to `deadline` seconds until nothing is in flight; False if time ran out."""
        try:
            await asyncio.wait_for(self._idle.wait(), deadline)
        except TimeoutError:
            return False
        return True


async def _unless_replayed(work: Coroutine[Any, Any, None], first_time: Awaitable[bool]) -> None:
    """`work`, unless another replica already handled the same signed request."""
    if not await first_time:
        work.close()  # never started: nothing of it ran
        log.warning("ignored a replayed Slack request (handled on another replica)")
        return
    await work
