"""Local copies of the collections a cluster's checks read, each kept current by list-then-watch.

Each collection (a kind, in one namespace or cluster-wide) is listed once, then watched from the
list's resourceVersion (`bot.kube.listwatch`, the one route): a stream the server ends is
watched again from the last version, a 410 Expired lists again, and a full list every
`resync_every` is the safety net. While a copy is not current (not listed yet, its watch broken
or forbidden, the cluster down) its reads go to the API server as before (`CachedKube`), so a
broken watch costs a poll, never an alert. Every change calls `on_change`, so a check can run
at once. A copy keeps of each object only what the checks read (`slim`), as compact JSON: a
thousand clusters' copies held as Python dicts cost twice the memory (38 against 17 kB a
cluster of the simulator's default, measured with tracemalloc), and a read decodes what it
reads, a few microseconds per object, into objects of its own that nothing else shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from bot.core import errors
from bot.core.models import RawObject
from bot.kube.kinds import ResourceRef
from bot.kube.listwatch import ListThenWatch
from bot.kube.ports import CollectionFollower

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

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# What a metadata-only copy keeps: the checks ask such lists only which objects exist (the CRDs).
KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "labels",
                 "creationTimestamp", "deletionTimestamp")  # fmt: skip
SHORT = 64  # strings up to this long are interned: the same words recur in every cluster's copy


def object_key(obj: RawObject) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def slim(obj: RawObject) -> RawObject:
    """`slimmed`, with keys and short strings interned (a thousand copies share one of each)."""
    compacted: RawObject = compact(slimmed(obj))
    return compacted


def slimmed(obj: RawObject) -> RawObject:
    """The object as kept, with only what the checks read, for a fleet's copies cost memory
    per cluster: `managedFields` collapse to their newest time (`conditions.last_write_time`),
    kubectl's last-applied copy of the whole object goes, and so does a Deployment's pod
    template (its replicas, selector and status are what `bot.health.deployments` reads)."""
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
    return kept


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
    """Whether a cluster answers, as its copies found it. While it is down (a list or a watch
    found no connection) its copies try it one at a time, RETRY_FIRST and then up to
    RETRY_LONGEST apart, and a read of a copy not current fails at once with that error: a
    cluster that is down costs a probe a minute, not every collection's retries and every
    check's reads, and holds no client thread that other clusters' work would wait for."""

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


class Flag:
    """An `asyncio.Event` that is only ever set, made only while someone waits for it: an
    idle Event keeps a queue of waiters of most of a kilobyte, times every collection of a
    fleet (bench/fleet_ha.py)."""

    def __init__(self) -> None:
        self._set = False
        self._event: asyncio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()  # its waiters hold it; nobody needs it from now on
            self._event = None

    async def wait(self) -> None:
        if self._set:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()


class Copy:
    """One collection as last listed and watched; `run()` keeps it current until cancelled."""

    def __init__(
        self,
        kube: CollectionFollower,
        key: CollectionKey,
        on_change: Callable[[], None],
        *,
        field_selector: str | None = None,
        reach: Reach | None = None,
        watch_seconds: float = WATCH_SECONDS,
        resync_every: float = RESYNC_EVERY,
    ) -> None:
        self.ref, namespace, self.metadata_only = key
        # Packed (compact JSON, decoded at each read) unless a reader keeps what it decoded
        # from each object as it was (`bot.state.watched`: one state read a thousand times).
        self.packed = True
        self.listing = ListThenWatch(
            kube, self.ref, namespace, listed=self._listed, changed=self._changed,
            field_selector=field_selector, metadata_only=self.metadata_only,
        )  # fmt: skip
        self.reach = reach or Reach()
        self.on_change = on_change
        self.watch_seconds = watch_seconds
        self.resync_every = resync_every
        self._kept: dict[ObjectKey, bytes | RawObject] = {}  # each object, packed or as is
        self.current = False  # the objects are what the API server holds (as of a moment ago)
        # A kind not served: list it again now (CRDs changed). Made when one waits for it:
        # an idle Event costs most of a kilobyte, times every collection of a fleet.
        self.nudged: asyncio.Event | None = None
        self.tried = Flag()  # its first list was answered, or failed
        self._back = False  # the cluster was down until this list: check at once

    @property
    def version(self) -> str:
        return self.listing.version

    def describe(self) -> str:
        return self.listing.describe()

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
        followed since its last list is listed again at once. The wait is jittered (up to
        twice as long, as client-go's reflector does: `wait.Jitter` with factor 1.0): a fleet's
        copies that failed together, at a start or an API server's restart, would otherwise
        all list again at the same instant, again and again."""
        if self.listing.watched:
            retry = 0.0
        await asyncio.sleep(retry * (1 + random.random()))
        return min(max(retry * 2, RETRY_FIRST), RETRY_LONGEST)

    async def _list(self) -> None:
        async with self.reach.attempt():  # in turn, after a while, when the cluster is down
            self._back = self.reach.down
            try:
                await self.listing.list()
            except errors.KubeUnavailable as e:
                self.reach.failed(e)
                raise
            finally:
                self.tried.set()
            self.reach.answered()

    async def _listed(self, listed: list[RawObject]) -> None:
        kept = {object_key(o): self._pack(o) for o in listed}
        changed = kept != self._kept or self._back
        self._kept, self.current = kept, True
        if changed:
            self.on_change()

    async def _watch_until_resync(self) -> None:
        """Watch from the version listed until the resync is due. A kind the cluster does not
        serve (no version) is listed again when the CRDs change (`nudged`), or after a while."""
        loop = asyncio.get_running_loop()
        resync_at = loop.time() + self.resync_every
        if not self.version:
            self.nudged = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.nudged.wait(), min(ABSENT_RELIST, self.resync_every))
            self.nudged = None
            return
        while (left := resync_at - loop.time()) > 0:
            await self.listing.watch(max(1.0, min(self.watch_seconds, left)))

    def nudge(self) -> None:
        """List again now, if it waits because its kind was not served."""
        if self.nudged is not None:
            self.nudged.set()

    async def _changed(self, kind: str, obj: RawObject) -> None:
        if kind == "BOOKMARK":
            return
        if kind == "DELETED":
            self._kept.pop(object_key(obj), None)
        else:
            self._kept[object_key(obj)] = self._pack(obj)
        self.on_change()

    def get(self, key: ObjectKey) -> RawObject | None:
        """The object named `key` as copied (None: there is none)."""
        kept = self._kept.get(key)
        return None if kept is None else _unpacked(kept)

    def objects(self) -> list[RawObject]:
        """Every object copied."""
        return [_unpacked(k) for k in self._kept.values()]

    def put(self, key: ObjectKey, obj: RawObject | None) -> None:
        """What a write returned or a read found (None: gone), kept until the watch says more."""
        if obj is None:
            self._kept.pop(key, None)
        else:
            self._kept[key] = self._pack(obj)

    def _pack(self, obj: RawObject) -> bytes | RawObject:
        if self.metadata_only:
            kept = metadata_of(obj)
        else:
            kept = slimmed(obj) if self.packed else slim(obj)
        if not self.packed:
            return kept
        return json.dumps(kept, separators=(",", ":"), ensure_ascii=False).encode()


def _unpacked(kept: bytes | RawObject) -> RawObject:
    if not isinstance(kept, bytes):
        return kept
    obj: RawObject = json.loads(kept)
    return obj
