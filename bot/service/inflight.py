"""Work in flight, so a shutdown can finish it instead of cutting a reply off mid-way.

Listeners wrap the work that follows an ack in `track()`; on SIGTERM the service stops taking new
commands and waits (up to a deadline) until nothing is tracked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager


class InFlight:
    """A count of running pieces of work, and an event that is set while there are none."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.draining = False

    @property
    def count(self) -> int:
        return self._count

    @contextmanager
    def track(self) -> Iterator[None]:
        """Count the enclosed work as in flight until it ends, however it ends."""
        self._count += 1
        self._idle.clear()
        try:
            yield
        finally:
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
