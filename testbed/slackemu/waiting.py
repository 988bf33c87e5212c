"""Waiting for the emulator's state to change, without sleep-polling.

Every recorded change calls `ChangeSignal.notify()`; waiters re-check their predicate only then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class ChangeSignal:
    """Wakes every waiter whenever the emulator records something."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        """Wake the current waiters; later waiters wait for the next change."""
        self._event.set()
        self._event = asyncio.Event()

    async def wait_for(self, predicate: Callable[[], T], seconds: float, what: str) -> T:
        """Wait until `predicate()` returns something truthy, and return it.

        Args:
            predicate: checked now and after every change; must not block.
            seconds: how long to wait at most.
            what: names the awaited thing in the timeout message.

        Raises:
            TimeoutError: the predicate stayed falsy for `seconds`.
        """
        try:
            async with asyncio.timeout(seconds):
                while True:
                    # Take the event before checking, so a change in between is not missed.
                    event = self._event
                    result = predicate()
                    if result:
                        return result
                    await event.wait()
        except TimeoutError:
            raise TimeoutError(f"timed out after {seconds}s waiting for {what}") from None
