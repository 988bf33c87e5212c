"""One cluster's watches, of one object or of a collection, on the one watch transport.

Each watch is an aiohttp stream read on the event loop (`bot.kube.streams`), holding no client
thread, at the server, token and certificates of the client's `Configuration`, counted with the
gateway's requests (`kai_chatops_kube_requests`, verb `watch`, when it ends). A watch is never
retried: `bot.kube.follow` polls instead, `bot.kube.listwatch` lists or watches again.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from bot.core.models import RawObject
from bot.kube.errors import Call
from bot.kube.kinds import ResourceRef
from bot.kube.ports import WatchEvent
from bot.kube.rest import RestCalls

if TYPE_CHECKING:  # imported where used (on the loop): aiohttp costs start-up time
    import aiohttp


class WatchSession:
    """The aiohttp session the watches are read with, made on first use (on the running loop),
    shared by every gateway `connect_all` makes: a session per cluster cost a fleet a
    connector, a cookie jar and a DNS cache each. No limit on its connections: every followed
    collection of every cluster holds one open."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class Watches:
    """The watches of the cluster whose client is `api_client` (its `configuration`)."""

    def __init__(self, api_client: Any, rest: RestCalls, session: WatchSession) -> None:
        self.cluster = rest.cluster
        self.session = session
        self._api = api_client
        self._rest = rest

    async def watch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        *,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[RawObject | None, None]:
        """Each new state of one object after `resource_version` (None once it is deleted), as
        the API server sends them, for up to `seconds` (then the stream just ends).

        A watch of the collection narrowed by `fieldSelector=metadata.name=NAME`, as `kubectl
        get --watch NAME` does, with bookmarks allowed.

        Raises:
            KubeForbidden: RBAC does not grant `watch`. KubeExpired: 410, the version is too old.
            KubeUnavailable: the API server cannot be reached, or the stream broke.
        """
        call = Call("watch", ref, name, namespace)
        changes = self._watch(call, f"metadata.name={name}", resource_version, seconds)
        async with contextlib.aclosing(changes):
            async for kind, obj in changes:
                if kind != "BOOKMARK":
                    yield None if kind == "DELETED" else obj

    def watch_collection(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[WatchEvent, None]:
        """Each event of the collection (the objects the selectors pick) after
        `resource_version`, bookmarks included, for up to `seconds` (then the stream just
        ends): the watch half of list-then-watch (`bot.kube.listwatch`). The request's own
        generator, not one around it: a fleet keeps thousands of these open at rest.

        Raises:
            as `watch_object`.
        """
        call = Call("watch", ref, None, namespace)
        return self._watch(call, field_selector, resource_version, seconds, label_selector)

    def _watch(
        self,
        call: Call,
        field_selector: str | None,
        resource_version: str,
        seconds: float,
        label_selector: str | None = None,
    ) -> AsyncGenerator[WatchEvent, None]:
        """One watch request, counted when it ends (outcome `error`: it raised)."""
        from bot.kube import streams  # here: aiohttp costs start-up time, and `check` never watches

        connect, read = self._rest.timeout
        self._rest.request_count += 1
        return streams.watch(
            self.session.get(),
            streams.Endpoint.of(self._api.configuration),
            call.ref.path(call.namespace),
            streams.watch_query(resource_version, seconds, field_selector, label_selector),
            call=call,
            cluster=self.cluster,
            connect_timeout=connect,
            read_timeout=seconds + read,
            ended=functools.partial(self._rest.count, "watch"),
        )
