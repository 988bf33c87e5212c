"""Delivery apart from the checks: a cluster's check saves what it owes and hands the sending to
its courier, so no check ever waits for Slack (a post held by a rate limit or an outage delays
the post, never the next check of that cluster or any other).

One task per cluster at a time: a delivery asked for while one runs is run once more after it,
with the latest work of its kind (each reads the state afresh, so the last one asked for
covers the others of its kind; a check's delivery, which also gathers diagnoses, is never
replaced by a plain drain). Nothing raises: a failing delivery is logged and the next check
asks again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Errand = Callable[[], Awaitable[None]]


class Couriers:
    """The delivery task of every cluster of one desk."""

    def __init__(self) -> None:
        self._running: dict[str, asyncio.Task[None]] = {}
        self._next: dict[str, dict[str, Errand]] = {}  # cluster -> kind -> the latest work

    def send(self, cluster: str, work: Errand, *, kind: str = "check") -> None:
        """Run `work` for `cluster` now, or right after the delivery under way (replacing
        any work of the same `kind` still waiting)."""
        waiting = self._next.setdefault(cluster, {})
        waiting.pop(kind, None)
        waiting[kind] = work
        running = self._running.get(cluster)
        if running is None or running.done():
            task = asyncio.get_running_loop().create_task(self._deliver(cluster))
            self._running[cluster] = task

    async def settled(self, cluster: str, within: float) -> bool:
        """Wait up to `within` seconds for the deliveries of `cluster` to end (those under way
        go on after it); whether they did."""
        running = self._running.get(cluster)
        if running is None or running.done():
            return True
        done, _ = await asyncio.wait({running}, timeout=within)
        return bool(done)

    def busy(self, cluster: str) -> bool:
        """Whether a delivery of `cluster` is under way or waiting to start."""
        running = self._running.get(cluster)
        return cluster in self._next or (running is not None and not running.done())

    async def _deliver(self, cluster: str) -> None:
        while work := self._take(cluster):
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivery of the alerts of cluster %s failed", cluster)

    def _take(self, cluster: str) -> Errand | None:
        waiting = self._next.get(cluster)
        if not waiting:
            self._next.pop(cluster, None)
            return None
        return waiting.pop(next(iter(waiting)))

    async def idle(self) -> None:
        """Wait until no delivery is under way (tests, and a clean stop)."""
        while running := [t for t in self._running.values() if not t.done()]:
            await asyncio.gather(*running, return_exceptions=True)

    async def close(self) -> None:
        """Stop every delivery under way (what it did not send is sent at the next start)."""
        self._next.clear()
        for task in self._running.values():
            task.cancel()
        await asyncio.gather(*self._running.values(), return_exceptions=True)
        self._running.clear()
