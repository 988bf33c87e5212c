"""Watch streams of the simulated API server: newline-delimited JSON events over chunked HTTP.

Subscribes to the store, sends the initial or replayed events, then live ones until
`timeoutSeconds`, the client leaving, or the server stopping. A resourceVersion older than
the kept history ends the stream with an ERROR event carrying a 410 Expired Status.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from bot.sim import status as st
from bot.sim.resources import ResourceType
from bot.sim.selectors import Selector
from bot.sim.store import Store

Event = tuple[str, dict[str, Any]]
_POLL_SECONDS = 0.5


class WatchHub:
    """The open watch streams of one server, so that stopping the server ends them at once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._queues: set[asyncio.Queue[Event | None]] = set()

    def close_all(self) -> None:
        """End every open stream (the server is stopping)."""
        for queue in self._queues:
            queue.put_nowait(None)

    async def stream(
        self,
        request: web.Request,
        rtype: ResourceType,
        namespace: str | None,
        selector: Selector,
        since: str,
        seconds: float | None,
    ) -> web.StreamResponse:
        """Serve one watch request.

        Raises:
            ApiError: 400 for an unreadable resourceVersion (before the stream starts).
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()

        def deliver(kind: str, obj: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, obj))

        try:
            first, unsubscribe = self.store.watch(rtype, namespace, selector, since, deliver)
        except st.ApiError as exc:
            if exc.code != 410:
                raise
            return await _single_error(request, exc)
        self._queues.add(queue)
        response = await _open(request)
        try:
            for event in first:
                await _write(response, event)
            await self._pump(request, response, queue, seconds)
        except ConnectionError:
            pass  # the client went away
        finally:
            unsubscribe()
            self._queues.discard(queue)
        return response

    async def _pump(
        self,
        request: web.Request,
        response: web.StreamResponse,
        queue: asyncio.Queue[Event | None],
        seconds: float | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while True:
            remaining = _POLL_SECONDS if deadline is None else deadline - loop.time()
            if remaining <= 0 or _is_gone(request):
                return
            try:
                event = await asyncio.wait_for(queue.get(), min(remaining, _POLL_SECONDS))
            except TimeoutError:
                continue
            if event is None:
                return
            await _write(response, event)


async def _open(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    return response


async def _write(response: web.StreamResponse, event: Event) -> None:
    kind, obj = event
    await response.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")


async def _single_error(request: web.Request, error: st.ApiError) -> web.StreamResponse:
    response = await _open(request)
    await _write(response, ("ERROR", error.status_body()))
    await response.write_eof()
    return response


def _is_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()
