"""Waiting in a test for the condition it asserts: poll with a deadline, never a fixed sleep.

Where an emulator records an event, wait on that (`stack.slack.wait_for_messages`, `wait_for`).
`wait_until` is for what has nothing to wake on: a process starting, the simulator's counters, a
background task's state. docs/CONVENTIONS.md ("Writing tests") says why.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

from testbed.sim import Simulator

T = TypeVar("T")

# Between two checks. A check that does I/O (an HTTP probe, a store read) passes a longer `every`.
EVERY = 0.01


@overload
async def wait_until(
    check: Callable[[], Awaitable[T]], seconds: float, what: str, *, every: float = EVERY
) -> T: ...
@overload
async def wait_until(
    check: Callable[[], T], seconds: float, what: str, *, every: float = EVERY
) -> T: ...
async def wait_until(
    check: Callable[[], object], seconds: float, what: str, *, every: float = EVERY
) -> object:
    """Call `check()` (awaited when it returns an awaitable) until its result is truthy; return it.

    Raises:
        TimeoutError: `seconds` passed first; the message names `what` was awaited.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result
        left = end - loop.time()
        if left <= 0:
            raise TimeoutError(f"not within {seconds}s: {what}")
        await asyncio.sleep(min(every, left))


async def watches_ended(sim: Simulator, seconds: float = 5.0) -> None:
    """Wait until the simulator has seen every watch end: it logs a watch only then."""
    await wait_until(lambda: not sim.open_watches, seconds, "every watch stream ended")
