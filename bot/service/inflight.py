"""Work in flight, so a shutdown can finish it instead of cutting a reply off mid-way, and
acks ahead of it.

Listeners start the work that follows an ack with `spawn()` (or wrap it in `track()`); on SIGTERM
the service stops taking new commands and waits (up to a deadline) until nothing is tracked.
While requests are being acked (`acking()`, around each HTTP request), spawned work waits: with
many commands at once, every ack leaves before the replies' work takes the event loop, so one
command's reply never delays another command's ack (bench/ack_latency.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from bot.access.once import OnceUnavailable

log = logging.getLogger(__name__)

# A burst of requests is over once no ack has been sent for this long (libuv's timers tick in
# milliseconds): the acks of one burst are sent before any of its replies' work starts.
QUIET = 0.002
# The longest a reply's work waits for acks: a steady stream of requests never starves it.
ACKS_FIRST_FOR = 0.2


class InFlight:
    """A count of running pieces of work, and an event that is set while there are none."""

    def __init__(self, *, quiet: float = QUIET, acks_first_for: float = ACKS_FIRST_FOR) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._burst = _Burst(quiet, acks_first_for)
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

    @contextmanager
    def acking(self) -> Iterator[None]:
        """Count the enclosed request as being acked: spawned work waits until none has been
        for `quiet` seconds (so the rest of a burst is acked first)."""
        self._burst.ack_started()
        try:
            yield
        finally:
            self._burst.ack_sent()

    def spawn(
        self,
        work: Coroutine[Any, Any, None],
        *,
        first_time: Awaitable[bool] | None = None,
        refuse: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Run `work` in a task of its own, in flight from this call until it ends.

        Listeners ack and return at once (the app runs with `process_before_response`, so the
        ack leaves as soon as the listener returns) and do the slow part here. An exception
        escaping `work` is logged, never lost. With `first_time` (whether the request is new on
        every replica, `bot.service.signing.SeenRequests`), `work` runs only if it says so; when
        that cannot be known (OnceUnavailable), a change (`refuse` given: what to say instead)
        does not run, a read does.
        `work` starts once a burst of acks is over (`acking`), or after `acks_first_for` at most:
        until then it is not even a task, so it costs the acks still to be sent nothing.
        """
        self._begin()
        if first_time is not None:
            work = _unless_replayed(work, first_time, refuse)
        self._burst.after(lambda: self._start(work))

    async def acks_sent(self) -> None:
        """Return once no burst of acks is open (at once when none is): what the service does
        on its own, its scheduled jobs, waits for the acks too."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def burst_over() -> None:
            if not done.done():  # its waiter may have been cancelled (a job stopped)
                done.set_result(None)

        self._burst.after(burst_over)
        await done

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._finished)

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

    async def cancel_running(self) -> None:
        """Cancel the work still running (a stop whose drain ran out of time) and wait for it
        to end, so none of it talks to Slack or the cluster after the service has stopped."""
        running = list(self._tasks)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def wait_idle(self, deadline: float) -> bool:
        """Wait up to `deadline` seconds until nothing is in flight; False if time ran out."""
        try:
            await asyncio.wait_for(self._idle.wait(), deadline)
        except TimeoutError:
            return False
        return True


class _Burst:
    """Acks being sent close to one another, and the work waiting for them to be sent.

    A burst begins with an ack while none is open and ends `quiet` seconds after its last ack,
    or `longest` seconds after it began, whichever comes first (the next ack then begins
    another): two timers per burst, none per piece of work waiting. What is to start after it
    (`after`) starts when it ends, in the order it came.
    """

    def __init__(self, quiet: float, longest: float) -> None:
        self._quiet, self._longest = quiet, longest
        self._acking = 0
        self._last_ack = 0.0
        self._over = True
        self._waiting: list[Callable[[], None]] = []
        self._quiet_timer: asyncio.TimerHandle | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def ack_started(self) -> None:
        self._acking += 1
        if self._over:
            self._over = False
            self._deadline = asyncio.get_running_loop().call_later(self._longest, self._end)

    def ack_sent(self) -> None:
        self._acking -= 1
        self._last_ack = asyncio.get_running_loop().time()
        if self._quiet_timer is None and not self._over:
            self._quiet_timer = asyncio.get_running_loop().call_at(
                self._last_ack + self._quiet, self._maybe_end
            )

    def after(self, start: Callable[[], None]) -> None:
        """`start()` now if no burst is open, else when it ends."""
        if self._over:
            start()
        else:
            self._waiting.append(start)

    def _maybe_end(self) -> None:
        """The quiet timer: the burst ends, or the timer waits on after the latest ack (an ack
        still being sent starts it again when it is done)."""
        self._quiet_timer = None
        due = self._last_ack + self._quiet
        if self._acking or self._over:
            return
        if asyncio.get_running_loop().time() < due:
            self._quiet_timer = asyncio.get_running_loop().call_at(due, self._maybe_end)
            return
        self._end()

    def _end(self) -> None:
        for timer in (self._quiet_timer, self._deadline):
            if timer is not None:
                timer.cancel()
        self._quiet_timer = self._deadline = None
        self._over = True
        waiting, self._waiting = self._waiting, []
        for start in waiting:
            start()


async def _unless_replayed(
    work: Coroutine[Any, Any, None],
    first_time: Awaitable[bool],
    refuse: Callable[[], Awaitable[None]] | None,
) -> None:
    """`work`, unless another replica already handled the same signed request, or it may have
    and `work` is a change (`refuse` says so instead)."""
    try:
        first = await first_time
    except OnceUnavailable:
        if refuse is not None:  # a change whose replay cannot be ruled out does not run
            work.close()
            await refuse()
            return
        first = True  # a read does
    except BaseException:
        work.close()  # cancelled (a stop) or failed before it started: nothing of it ran
        raise
    if not first:
        work.close()  # never started: nothing of it ran
        log.warning("ignored a replayed Slack request (handled on another replica)")
        return
    await work
