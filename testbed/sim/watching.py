"""Watch streams of the simulated API server: newline-delimited JSON events over chunked HTTP.

Subscribes to the store, sends the initial or replayed events, then live ones until
`timeoutSeconds`, the client leaving, or the server stopping. A resourceVersion older than
the kept history ends the stream with an ERROR event carrying a 410 Expired Status. A watch list
(`sendInitialEvents=true`) ends its initial events with a BOOKMARK; with `allowWatchBookmarks`
an idle stream gets a BOOKMARK every `bookmark_every` seconds (kube-apiserver: about a minute, and
before a `timeoutSeconds` ends) at the store's current resourceVersion, not the last one the stream
sent: changes the watch does not select move it too (k8s.io/apiserver pkg/storage/cacher
`cacheWatcher.nextBookmarkTime` and the cacher's bookmark of its current version).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from testbed.sim import status as st
from testbed.sim.history import bookmark
from testbed.sim.resources import ResourceType
from testbed.sim.routing import is_true
from testbed.sim.selectors import Selector
from testbed.sim.store import Store

Event = tuple[str, dict[str, Any]]
_POLL_SECONDS = 0.5
_NOT_OLDER_THAN = "NotOlderThan"


@dataclass(frozen=True)
class WatchOptions:
    """A watch's query: where it starts, whether it is a watch list, whether it wants bookmarks."""

    since: str = ""
    send_initial: bool | None = None
    allow_bookmarks: bool = False
    timeout: float | None = None


def read_watch_options(query: Mapping[str, str], timeout: float | None) -> WatchOptions:
    """The watch options, checked as k8s.io/apimachinery pkg/apis/meta/internalversion/
    validation/validation.go `validateWatchOptions` checks them.

    Raises:
        ApiError: 422 Invalid `ListOptions.meta.k8s.io` for a combination the server forbids.
    """
    raw_initial = query.get("sendInitialEvents")
    send_initial = None if raw_initial is None else is_true(raw_initial)
    match = query.get("resourceVersionMatch", "")
    problems = []
    if send_initial is not None and match != _NOT_OLDER_THAN:
        problems.append(
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
            "resourceVersionMatch to NotOlderThan"
        )
    if match and send_initial is None:
        problems.append(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch "
            "unless sendInitialEvents is provided"
        )
    if match and match != _NOT_OLDER_THAN:
        problems.append(
            f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
            f'"{_NOT_OLDER_THAN}"'
        )
    if problems:
        cause = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
        raise st.invalid("ListOptions", "meta.k8s.io", "", cause)
    allow = is_true(query.get("allowWatchBookmarks"))
    return WatchOptions(query.get("resourceVersion", ""), send_initial, allow, timeout)


class WatchHub:
    """The open watch streams of one server, so that stopping the server ends them at once."""

    def __init__(
        self, store: Store, *, bookmark_every: float = 1.0, gone_every: float = _POLL_SECONDS
    ) -> None:
        self.store = store
        self.bookmark_every = bookmark_every
        self.gone_every = gone_every  # how often an idle stream looks for its client gone
        self._queues: set[asyncio.Queue[Event | None]] = set()

    @property
    def open_streams(self) -> int:
        """Watch streams still open (a stream is logged in `requests` once it ends)."""
        return len(self._queues)

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
        options: WatchOptions,
    ) -> web.StreamResponse:
        """Serve one watch request.

        Raises:
            ApiError: 400 for an unreadable resourceVersion (before the stream starts).
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        pending = _Pending()

        def deliver(kind: str, obj: dict[str, Any]) -> None:
            pending.offered += 1  # under the store's lock, before its write is visible
            loop.call_soon_threadsafe(queue.put_nowait, (kind, obj))

        try:
            first, unsubscribe = self.store.watch(
                rtype,
                namespace,
                selector,
                options.since,
                deliver,
                send_initial=options.send_initial,
            )
        except st.ApiError as exc:
            if exc.code != 410:
                raise
            return await _single_error(request, exc)
        self._queues.add(queue)
        response = await _open(request)
        stream = _Stream(
            response, rtype, options.allow_bookmarks, self.bookmark_every, self.gone_every
        )
        stream.sent_rv = int(options.since) if options.since.isdigit() else 0
        stream.current_rv = lambda: self._current_rv(pending)
        try:
            for event in first:
                await stream.send(event)
            await self._pump(request, stream, queue, pending, options.timeout)
        except ConnectionError:
            pass  # the client went away
        finally:
            unsubscribe()
            self._queues.discard(queue)
        return response

    async def _pump(
        self,
        request: web.Request,
        stream: _Stream,
        queue: asyncio.Queue[Event | None],
        pending: _Pending,
        seconds: float | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = None if seconds is None else loop.time() + seconds
        while True:
            remaining = self.gone_every if deadline is None else deadline - loop.time()
            if remaining <= 0 or _is_gone(request):
                return
            wait = min(remaining, self.gone_every, stream.until_bookmark(loop.time()))
            try:
                event = await asyncio.wait_for(queue.get(), max(wait, 0.0))
            except TimeoutError:
                await stream.bookmark_if_due(loop.time())
                continue
            if event is None:
                return
            pending.taken += 1
            await stream.send(event)

    def _current_rv(self, pending: _Pending) -> int:
        """The store's resourceVersion when every event of the stream up to it was sent (read
        first: a later write counts as pending before its version is readable); else 0."""
        rv = int(self.store.resource_version)
        return rv if pending.offered == pending.taken else 0


class _Pending:
    """Events handed to a stream's queue (by the writing thread) and taken out of it (by the
    loop): one writer each, so neither count needs a lock."""

    def __init__(self) -> None:
        self.offered = 0
        self.taken = 0


class _Stream:
    """One open watch response: writes events, remembers the newest resourceVersion sent, and
    sends a BOOKMARK when idle, if the client allowed bookmarks, at the store's current version
    (at the last one sent while events wait in the queue)."""

    def __init__(
        self,
        response: web.StreamResponse,
        rtype: ResourceType,
        bookmarks: bool,
        every: float,
        idle: float = _POLL_SECONDS,
    ) -> None:
        self.response = response
        self.rtype = rtype
        self.bookmarks = bookmarks
        self.every = every
        self.idle = idle
        self.sent_rv = 0
        self.current_rv: Callable[[], int] = lambda: 0
        self.last_sent = asyncio.get_running_loop().time()

    async def send(self, event: Event) -> None:
        rv = str(event[1].get("metadata", {}).get("resourceVersion", ""))
        self.sent_rv = max(self.sent_rv, int(rv) if rv.isdigit() else 0)
        self.last_sent = asyncio.get_running_loop().time()
        await _write(self.response, event)

    def until_bookmark(self, now: float) -> float:
        if not self.bookmarks:
            return self.idle
        return self.last_sent + self.every - now

    async def bookmark_if_due(self, now: float) -> None:
        if not self.bookmarks or now - self.last_sent < self.every:
            return
        rv = max(self.current_rv(), self.sent_rv)
        if rv:
            await self.send(("BOOKMARK", bookmark(self.rtype, rv)))
        else:  # nothing to mark yet: wait another period rather than spin
            self.last_sent = now


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
