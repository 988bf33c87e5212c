"""A local copy of the collections a cluster's checks read, kept current by watches.

Each collection (a kind, in one namespace or cluster-wide) is listed once, then watched from the
list's resourceVersion (bookmarks keep that version fresh), as client-go's reflector does
(k8s.io/client-go tools/cache/reflector.go `ListAndWatch`): a stream the server ends is watched
again from the last version, a 410 Expired lists again, and a full list every `resync_every`
is the safety net. While a collection is not current (not listed yet, its watch broken or
forbidden, the cluster down) its reads go to the API server as before, so a broken watch
costs a poll, never an alert. Every change calls `on_change`, so a check can run at once.

`CachedKube` is the `KubeWriter` the checks are given: reads of the collections it follows are
answered from memory; everything else (selectors, writes, logs) goes to the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Protocol, runtime_checkable

from bot.core import errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.identity import Impersonation
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeWatcher, KubeWriter

log = logging.getLogger(__name__)

# Each watch request's timeoutSeconds (kube-apiserver keeps a client's own, k8s.io/apiserver
# pkg/endpoints/handlers/get.go `ListResource`; bookmarks about once a minute keep the connection
# from looking idle): with a dozen collections per cluster, one
# request per collection per 30 minutes plus the hourly lists stay well under a request per
# cluster per interval.
WATCH_SECONDS = 1800.0
RESYNC_EVERY = 3600.0  # a full list of every followed collection, whatever the watches said
ABSENT_RELIST = 300.0  # a kind the cluster does not serve is listed again this often (installed?)
RETRY_FIRST = 1.0
RETRY_LONGEST = 60.0  # a cluster that is down is tried this often: no more than a healthy one
ObjectKey = tuple[str, str]  # (namespace, name)
CollectionKey = tuple[ResourceRef, str | None, bool]  # (kind, namespace, metadata only)


@runtime_checkable
class CollectionWatcher(Protocol):
    """What following a collection needs of a gateway: a versioned list and a watch."""

    async def list_versioned(
        self, ref: ResourceRef, namespace: str | None = None, *, metadata_only: bool = False
    ) -> tuple[list[RawObject], str]: ...

    def watch_collection(
        self, ref: ResourceRef, namespace: str | None, *, resource_version: str, seconds: float
    ) -> AsyncGenerator[tuple[str, RawObject], None]: ...


def object_key(obj: RawObject) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What a metadata-only copy keeps: the checks ask such lists only which objects exist (the CRDs).
KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "labels",
                 "creationTimestamp", "deletionTimestamp")  # fmt: skip
SHORT = 64  # strings up to this long are interned: the same words recur in every cluster's copy


def slim(obj: RawObject) -> RawObject:
    """The object as kept, with only what the checks read, for a fleet's copies cost memory
    per cluster: `managedFields` collapse to their newest time (`conditions.last_write_time`),
    kubectl's last-applied copy of the whole object goes, and so does a Deployment's pod
    template (its replicas, selector and status are what `bot.health.deployments` reads). Keys
    and short strings are interned, so a thousand copies share one of each."""
    meta = dict(obj.get("metadata") or {})
    managed = meta.get("managedFields")
    if isinstance(managed, list):
        times = [str(e["time"]) for e in managed if isinstance(e, dict) and e.get("time")]
        meta["managedFields"] = [{"time": max(times)}] if times else []
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        meta["annotations"] = _without(annotations, LAST_APPLIED)
    kept = {**obj, "metadata": meta}
    spec = kept.get("spec")
    if kept.get("kind") == "Deployment" and isinstance(spec, dict) and "template" in spec:
        kept["spec"] = _without(spec, "template")
    compacted: RawObject = compact(kept)
    return compacted


def compact(value: Any) -> Any:
    """`value` with every key and every string up to SHORT characters interned."""
    if isinstance(value, dict):
        return {_interned(k): compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return _interned(value)


def _interned(value: Any) -> Any:
    return sys.intern(value) if isinstance(value, str) and len(value) <= SHORT else value


def _without(entry: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != key}


def metadata_of(obj: RawObject) -> RawObject:
    """The object as a metadata-only list returns it (PartialObjectMetadata), with only
    KEPT_METADATA."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in KEPT_METADATA if k in meta}
    partial: RawObject = compact(
        {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": kept}
    )
    return partial


class Reach:
    """Whether a cluster answers, as its collections found it. While it is down (a list or a
    watch found no connection) its collections try it one at a time, RETRY_FIRST and then up
    to RETRY_LONGEST apart, and a read of a collection not current fails at once with that
    error: a cluster that is down costs a probe a minute, not every collection's retries and
    every check's reads, and holds no client thread that other clusters' work would wait for."""

    def __init__(self, *, retry_first: float = RETRY_FIRST, retry_longest: float = RETRY_LONGEST):
        self.error: errors.KubeUnavailable | None = None
        self.retry_first, self.retry_longest = retry_first, retry_longest
        self._retry = 0.0
        self._turn = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def attempt(self) -> AsyncIterator[None]:
        """Around a list: at once while the cluster answers; in turn, after the backoff, while
        it does not."""
        if self.error is None:
            yield
            return
        async with self._turn:
            if self.error is not None:
                await asyncio.sleep(self._retry)
            yield

    @property
    def down(self) -> bool:
        return self.error is not None

    def failed(self, error: errors.KubeUnavailable) -> None:
        self.error = error
        self._retry = min(max(self._retry * 2, self.retry_first), self.retry_longest)

    def answered(self) -> None:
        self.error, self._retry = None, 0.0


class Collection:
    """One collection as last listed and watched; `run()` keeps it current until cancelled."""

    def __init__(
        self,
        kube: CollectionWatcher,
        key: CollectionKey,
        cluster: str,
        on_change: Callable[[], None],
        *,
        reach: Reach | None = None,
        watch_seconds: float = WATCH_SECONDS,
        resync_every: float = RESYNC_EVERY,
    ) -> None:
        self.kube = kube
        self.reach = reach or Reach()
        self.ref, self.namespace, self.metadata_only = key
        self.cluster = cluster
        self.on_change = on_change
        self.watch_seconds = watch_seconds
        self.resync_every = resync_every
        self.items: dict[ObjectKey, RawObject] = {}
        self.version = ""
        self.current = False  # the items are what the API server holds (as of a moment ago)
        self.watched = False  # its watch has sent an event since the last list
        self.nudged = asyncio.Event()  # a kind not served: list it again now (CRDs changed)

    def describe(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"cluster {self.cluster}: {self.ref.plural}{where}"

    async def run(self) -> None:
        """List, watch, and list again on 410 or at the resync; until cancelled. While the
        copy is not current its reads go to the API server (`CachedKube`)."""
        retry = 0.0  # a 410 is listed again at once; anything failing again waits longer
        while True:
            try:
                await self._list()
                await self._watch_until_resync()
                retry = 0.0
            except errors.KubeForbidden as e:
                self.current = False
                log.warning("%s: %s; read from the API at each check instead", self.describe(), e)
                await asyncio.sleep(self.resync_every)
            except errors.KubeUnavailable as e:
                self.current = False
                log.info("%s: %s; read from the API until it is followed again", self.describe(), e)
                if not self.reach.down:  # listed, but its watch broke: as any other failure
                    retry = await self._back_off(retry)
            except Exception as e:  # KubeError, or a bug: never a copy left current but stale
                self.current = False
                if not isinstance(e, errors.KubeError):
                    log.exception("%s: following failed; read from the API", self.describe())
                log.info("%s: %s; read from the API until it is followed again", self.describe(), e)
                retry = await self._back_off(retry)

    async def _back_off(self, retry: float) -> float:
        """Wait before listing again after a failure; returns the next failure's wait. A copy
        followed since its last list is listed again at once."""
        if self.watched:
            retry = 0.0
        await asyncio.sleep(retry)
        return min(max(retry * 2, RETRY_FIRST), RETRY_LONGEST)

    async def _list(self) -> None:
        async with self.reach.attempt():  # in turn, after a while, when the cluster is down
            was_down = self.reach.down
            try:
                listed, self.version = await self.kube.list_versioned(
                    self.ref, self.namespace, metadata_only=self.metadata_only
                )
            except errors.KubeUnavailable as e:
                self.reach.failed(e)
                raise
            self.reach.answered()
        items = {object_key(o): self._kept(o) for o in listed}
        changed = items != self.items or was_down  # back: check at once
        self.items, self.current, self.watched = items, True, False
        if changed:
            self.on_change()

    async def _watch_until_resync(self) -> None:
        """Watch from the version listed until the resync is due. A kind the cluster does not
        serve (no version) is listed again when the CRDs change (`nudged`), or after a while."""
        loop = asyncio.get_running_loop()
        resync_at = loop.time() + self.resync_every
        if not self.version:
            self.nudged.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.nudged.wait(), min(ABSENT_RELIST, self.resync_every))
            return
        while (left := resync_at - loop.time()) > 0:
            changes = self.kube.watch_collection(
                self.ref,
                self.namespace,
                resource_version=self.version,
                seconds=max(1.0, min(self.watch_seconds, left)),
            )
            async with contextlib.aclosing(changes):
                async for kind, obj in changes:
                    self._apply(kind, obj)

    def _apply(self, kind: str, obj: RawObject) -> None:
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        self.version = version or self.version
        self.watched = True
        if kind == "BOOKMARK":
            return
        if kind == "DELETED":
            self.items.pop(object_key(obj), None)
        else:
            self.items[object_key(obj)] = self._kept(obj)
        self.on_change()

    def _kept(self, obj: RawObject) -> RawObject:
        return metadata_of(obj) if self.metadata_only else slim(obj)


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
        self._options = options
        self._collections: dict[CollectionKey, Collection] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._settled = False  # at rest since the idle connections were closed
        # Asked once: a runtime-checkable Protocol's isinstance costs tens of microseconds.
        self._follows: CollectionWatcher | None = (
            kube if isinstance(kube, CollectionWatcher) else None
        )
        retries = {k: options.pop(k) for k in ("retry_first", "retry_longest") if k in options}
        self.reach = Reach(**retries)

    @property
    def followed(self) -> list[Collection]:
        return list(self._collections.values())

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        followed = None
        if self.cached_gets:
            followed = self._current(ref, namespace, metadata_only=False)
        if followed is None:
            return await self.kube.get_object(ref, name, namespace)
        return followed.items.get((namespace if ref.namespaced and namespace else "", name))

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
        if not label_selector and not field_selector:
            followed = self._current(ref, namespace, metadata_only=metadata_only)
        if followed is None:
            return await self.kube.list_objects(
                ref,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                metadata_only=metadata_only,
                page_size=page_size,
            )
        return list(followed.items.values())

    async def server_version(self) -> str:
        return await self.kube.server_version()

    async def read_pod_log(
        self, namespace: str, pod: str, *, container: str, previous: bool, tail_lines: int
    ) -> str:
        return await self.kube.read_pod_log(
            namespace, pod, container=container, previous=previous, tail_lines=tail_lines
        )

    async def patch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        body: Any,
        *,
        json_patch: bool = False,
        acting_as: Impersonation | None = None,
    ) -> RawObject:
        return await self.kube.patch_object(
            ref, name, namespace, body, json_patch=json_patch, acting_as=acting_as
        )

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject:
        return await self.kube.create_object(ref, namespace, body)

    async def watch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        *,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[RawObject | None, None]:
        """The gateway's own watch of one object (a change followed after a write)."""
        if not isinstance(self.kube, KubeWatcher):
            raise errors.KubeUnavailable(f"cluster {self.cluster}: this client cannot watch")
        changes = self.kube.watch_object(
            ref, name, namespace, resource_version=resource_version, seconds=seconds
        )
        async with contextlib.aclosing(changes):
            async for change in changes:
                yield change

    def _current(
        self, ref: ResourceRef, namespace: str | None, *, metadata_only: bool
    ) -> Collection | None:
        """The followed collection when it is current; starts following it otherwise."""
        if self._follows is None:
            return None
        key = (ref, namespace if ref.namespaced else None, metadata_only)
        found = self._collections.get(key)
        if found is None:
            changed = functools.partial(self._changed, ref)
            found = Collection(
                self._follows, key, self.cluster, changed, reach=self.reach, **self._options
            )
            self._collections[key] = found
            self._tasks.append(asyncio.get_running_loop().create_task(found.run()))
        if not found.current and self.reach.error is not None:
            raise self.reach.error  # the cluster is down: say so without asking it again
        return found if found.current else None

    def _changed(self, ref: ResourceRef) -> None:
        self.changes += 1
        if ref == kinds.CRD:  # a kind installed: those found absent are listed again now
            for collection in self._collections.values():
                if not collection.version:
                    collection.nudged.set()
        self.on_change()

    @property
    def at_rest(self) -> bool:
        """Whether every collection read so far is followed and current: reads ask nothing."""
        return bool(self._collections) and all(c.current for c in self._collections.values())

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
        self._collections.clear()  # read from the API again, or followed anew
