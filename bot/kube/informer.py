"""The `KubeWriter` a cluster's checks are given: reads of what it follows answered from memory.

Every list without a label selector (and get, with `cached_gets`) of a collection is answered
from a local copy kept current by list-then-watch (`bot.kube.copies`, over the one route
`bot.kube.listwatch`), followed from its first read on (a field selector makes a collection of
its own: the scheduler's Events about PodGroups); label selectors, writes, logs and watches go
to the gateway, whose own methods are handed on. While a copy is not current its reads go to
the API server. A change wakes the check (`on_change`), except in the QUIET kinds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable

from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.copies import CollectionKey, Copy, Reach
from bot.kube.kinds import ResourceRef
from bot.kube.ports import CollectionFollower, KubeWatcher, KubeWriter

# How long a read waits for its copy's first list before it asks the API server itself: about
# what the list itself may take on a busy API server (`kubernetes.request_timeout`, 10 s).
FIRST_LIST = 10.0
# What a check reads of these is their age: a Lease is renewed every few seconds by its holder,
# and the scheduler's Events about pending PodGroups are counted up every cycle (client-go lets
# one through per group every 5 minutes). A check woken by each would run at their pace for
# nothing; it names itself when a Lease or an Event would be too old (`bot.alerts.stall`).
QUIET = frozenset({kinds.LEASE, kinds.EVENT})


class CachedKube:
    """A cluster's gateway whose unfiltered lists (and gets, with `cached_gets`) are answered
    from followed collections (each followed from its first read on); `close()` ends the
    watches. Without `cached_gets` a get reads the API: what a write is planned from must be
    the object as it is, not as the copy was a moment ago."""

    def __init__(
        self,
        kube: KubeWriter,
        on_change: Callable[[], None] = lambda: None,
        *,
        cached_gets: bool = True,
        **options: float,
    ) -> None:
        self.kube = kube
        self.cached_gets = cached_gets
        self.cluster = kube.cluster
        self.on_change = on_change
        self.changes = 0  # changes seen in any followed collection so far
        # What is not read from a copy is the gateway's own (`bot.kube.ports`).
        self.server_version = kube.server_version
        self.read_pod_log = kube.read_pod_log
        self.patch_object = kube.patch_object
        self.create_object = kube.create_object
        if isinstance(kube, KubeWatcher):  # a change followed after a write: its own watch
            self.watch_object = kube.watch_object
        retries = {k: options.pop(k) for k in ("retry_first", "retry_longest") if k in options}
        self.reach = Reach(**retries)
        self._options = options
        self._copies: dict[tuple[CollectionKey, str | None], Copy] = {}  # by field selector too
        self._tasks: list[asyncio.Task[None]] = []
        self._settled = False  # at rest since the idle connections were closed
        # Asked once: a runtime-checkable Protocol's isinstance costs tens of microseconds.
        self._follows = kube if isinstance(kube, CollectionFollower) else None

    @property
    def followed(self) -> list[Copy]:
        return list(self._copies.values())

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        followed = None
        if self.cached_gets:
            followed = await self._current(ref, namespace, False)
        if followed is None:
            return await self.kube.get_object(ref, name, namespace)
        return followed.get((namespace if ref.namespaced and namespace else "", name))

    async def list_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = 500,
    ) -> list[RawObject]:
        followed = None
        if not label_selector:
            followed = await self._current(ref, namespace, metadata_only, field_selector)
        if followed is None:
            return await self.kube.list_objects(
                ref,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                metadata_only=metadata_only,
                page_size=page_size,
            )
        return followed.objects()

    async def _current(
        self,
        ref: ResourceRef,
        namespace: str | None,
        metadata_only: bool,
        field_selector: str | None = None,
    ) -> Copy | None:
        """The followed collection when it is current; starts following it otherwise, and
        waits up to FIRST_LIST for its first list: one list serves the copy and this read (at
        a start a fleet's checks listed every collection twice, once for its copy and once
        for themselves, on a thousand API servers at once: bench/fleet_ha.py)."""
        if self._follows is None:
            return None
        key = (ref, namespace if ref.namespaced else None, metadata_only)
        found = self._copies.get((key, field_selector or None))
        if found is None:
            changed = _unheard if ref in QUIET else functools.partial(self._changed, ref)
            found = Copy(
                self._follows, key, changed, field_selector=field_selector or None,
                reach=self.reach, **self._options,
            )  # fmt: skip
            self._copies[(key, field_selector or None)] = found
            self._tasks.append(asyncio.get_running_loop().create_task(found.run()))
        if not found.current and not found.tried.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(found.tried.wait(), FIRST_LIST)
        if not found.current and self.reach.error is not None:
            raise self.reach.error  # the cluster is down: say so without asking it again
        return found if found.current else None

    def _changed(self, ref: ResourceRef) -> None:
        self.changes += 1
        if ref == kinds.CRD:  # a kind installed: those found absent are listed again now
            for copy in self._copies.values():
                if not copy.version:
                    copy.nudge()
        self.on_change()

    @property
    def at_rest(self) -> bool:
        """Whether every collection read so far is followed and current: reads ask nothing."""
        return bool(self._copies) and all(c.current for c in self._copies.values())

    def settle(self) -> None:
        """Once every read is answered from a current copy, close the gateway's idle
        connections (`close_idle_connections`): nothing asks the API until something changes."""
        if not self.at_rest:
            self._settled = False
        elif not self._settled:
            self._settled = True
            release = getattr(self.kube, "close_idle_connections", None)
            if release is not None:
                release()

    async def close(self) -> None:
        """Stop following (each watch's connection ends with its task)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self._copies.clear()  # read from the API again, or followed anew


def _unheard() -> None:
    """A QUIET copy's changes: kept, never waking the check."""
