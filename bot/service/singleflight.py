"""Concurrent callers asking for the same thing share one run of the work.

During an incident everyone types `/kai health` at once; one check per cluster answers them all,
so the bot neither hammers the API server nor falls behind on Slack's 3-second acks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """At most one run of the work per key at a time; late callers await the running one."""

    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, work: Callable[[], Awaitable[V]]) -> V:
        """The result of `work()`, started now or already under way for `key`."""
        future = self._running.get(key)
        if future is None:
            future = asyncio.ensure_future(work())
            self._running[key] = future
            future.add_done_callback(lambda _: self._running.pop(key, None))
        # shield: one caller giving up (cancelled) must not cancel the others' result.
        return await asyncio.shield(future)

    def in_flight(self, key: K) -> bool:
        return key in self._running
