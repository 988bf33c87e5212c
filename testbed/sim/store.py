"""The simulated cluster's object store: CRUD with real API-server semantics, lists, watch history.

Pure state (no aiohttp, no HTTP): one global resourceVersion counter, generations, 409 on stale
versions, status-subresource isolation, finalizers, label/field selectors, `limit`/`continue`,
and a bounded event history for watches. Thread-safe (one lock), so tests may call it from a
worker thread. Watchers are plain callbacks, invoked under the lock: they must not block.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from testbed.sim import objects
from testbed.sim import status as st
from testbed.sim.history import (
    Change,
    WatchCallback,
    Watcher,
    bookmark,
    decode_continue,
    encode_continue,
    parse_rv,
    roll_back,
    view_change,
)
from testbed.sim.objects import PatchType, WriteMode
from testbed.sim.resources import CRD_TYPE, ResourceType, TypeRegistry, types_from_crd
from testbed.sim.selectors import Selector

Clock = Callable[[], datetime]
Stored = dict[str, Any]
_ObjectKey = tuple[str, str]  # (namespace or "", name)


def _list_rv(text: str) -> int:
    """A list's resourceVersion parameter ("" and "0": any), as the storage layer parses it.

    Raises:
        ApiError: 400 when it is not a number.
    """
    if not text:
        return 0
    if not text.isdigit():
        raise st.ApiError(
            400,
            f'invalid resource version: resourceVersion: Invalid value: "{text}": '
            f'strconv.ParseUint: parsing "{text}": invalid syntax',
        )
    return int(text)


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


class Store:
    """All objects of the simulated cluster, keyed by (group, plural) then (namespace, name)."""

    def __init__(self, *, clock: Clock = utc_now, history: int = 1000) -> None:
        self.clock = clock
        self._lock = threading.RLock()
        self._rv = 0
        self._compacted = 0
        self._history: collections.deque[Change] = collections.deque(maxlen=history)
        self._objects: dict[tuple[str, str], dict[_ObjectKey, Stored]] = {}
        # Open watches by the resource they watch, as kube-apiserver keeps a watch cache per
        # resource: a write is offered only to those (a fleet's thousands of watches on one
        # simulator were each asked about every write).
        self._watchers: dict[tuple[str, str], dict[Watcher, None]] = {}
        self.registry = TypeRegistry()

    def types(self) -> list[ResourceType]:
        """Every served resource type: the built-ins, then those of the stored CRDs."""
        return self.registry.all()

    def find_type(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at exactly this group, version and plural, if any."""
        return self.registry.find(group, version, plural)

    def resolve(self, api_version: str, name: str) -> ResourceType:
        """The type an apiVersion and a kind, plural or short name designate (else 404 ApiError)."""
        return self.registry.resolve(api_version, name)

    @property
    def watch_count(self) -> int:
        """How many watches are open (tests wait on it before changing what they watch)."""
        with self._lock:
            return sum(len(watchers) for watchers in self._watchers.values())

    @property
    def resource_version(self) -> str:
        """The newest resourceVersion handed out."""
        with self._lock:
            return str(self._rv)

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        """One object as read at `rtype`'s version.

        Raises:
            ApiError: 404 when it does not exist.
        """
        with self._lock:
            return objects.render(rtype, self._existing(rtype, namespace, name))

    def list_objects(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        *,
        selector: Selector | None = None,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        match: str = "",
    ) -> dict[str, Any]:
        """A `<Kind>List` of the matching objects, sorted by namespace and name, one page of it.

        Every page of one list is served at the first page's resourceVersion (a snapshot, as
        etcd serves it); a token whose snapshot was compacted away is 410 Expired, carrying an
        "inconsistent" token that lists the rest as things are now (k8s.io/apiserver
        pkg/storage/etcd3/store.go `GetList`). `resource_version` with `match` "Exact" lists
        that snapshot; otherwise a resourceVersion only has to be no newer than the store's
        (k8s.io/apiserver pkg/storage/cacher `waitUntilFreshAndBlock`). `remainingItemCount`
        is only counted without selectors (etcd3 store.go: it cannot count what a selector
        would leave out).

        Raises:
            ApiError: 400 for an unreadable continue token or resourceVersion, or both given;
                410 Expired for a compacted snapshot; 504 for a resourceVersion newer than the
                store's.
        """
        selector = selector or Selector()
        start, snapshot = decode_continue(continue_token) if continue_token else (None, -1)
        wanted = _list_rv(resource_version)
        if continue_token and wanted:
            raise st.ApiError(400, "specifying resource version is not allowed when using continue")
        with self._lock:
            if wanted > self._rv:
                raise st.too_large_resource_version(wanted, self._rv)
            if match == "Exact":
                if wanted < self._compacted:
                    raise st.ApiError(
                        410,
                        "The resourceVersion for the provided list is too old.",
                        reason="Expired",
                    )
                snapshot = wanted
            rv = self._rv if snapshot < 0 else snapshot
            if rv < self._compacted:
                raise st.continue_expired(encode_continue(start or ("", ""), -1))
            bucket = self._objects.get(rtype.storage_key, {})
            if rv < self._rv:
                bucket = roll_back(bucket, rtype.storage_key, self._history, rv)
            keys = sorted(
                key
                for key, obj in bucket.items()
                if (namespace is None or key[0] == namespace) and selector.matches(obj)
            )
            if start is not None:
                keys = [k for k in keys if k > start]
            page = keys[:limit] if limit > 0 else keys
            items = [objects.render(rtype, bucket[k]) for k in page]
        metadata: dict[str, Any] = {"resourceVersion": str(rv)}
        if len(page) < len(keys):
            metadata["continue"] = encode_continue(page[-1], rv)
            if not (selector.labels or selector.fields):
                metadata["remainingItemCount"] = len(keys) - len(page)
        kind = f"{rtype.kind}List"
        return {"kind": kind, "apiVersion": rtype.api_version, "metadata": metadata, "items": items}

    def items(self, rtype: ResourceType, namespace: str | None) -> list[dict[str, Any]]:
        """Every object of a type (in `namespace`, or everywhere), as one unpaged list."""
        items: list[dict[str, Any]] = self.list_objects(rtype, namespace)["items"]
        return items

    def create(
        self,
        rtype: ResourceType,
        namespace: str | None,
        body: Any,
        *,
        mode: WriteMode = "main",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Store a new object (generation 1, a fresh uid and resourceVersion).

        Raises:
            ApiError: 409 AlreadyExists, 400/422 for a bad body.
        """
        with self._lock:
            new = objects.prepare_create(rtype, namespace, body, mode, self.clock())
            key = (new["metadata"].get("namespace", ""), new["metadata"]["name"])
            if key in self._objects.get(rtype.storage_key, {}):
                raise st.already_exists(rtype.plural, rtype.group, key[1])
            return self._commit(rtype, key, None, new, dry_run)

    def replace(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        mode: WriteMode = "main",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """PUT: replace an object (or only its status with `mode="status"`).

        Raises:
            ApiError: 404 when absent, 409 on a stale resourceVersion, 400 for a bad body, 422
                for a custom resource without a resourceVersion.
        """
        with self._lock:
            old = self._existing(rtype, namespace, name)
            objects.check_conditional_update(rtype, body, mode)
            new = objects.prepare_update(rtype, old, body, mode)
            return self._commit(rtype, (namespace or "", name), old, new, dry_run)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        patch_type: PatchType,
        patch: Any,
        *,
        mode: WriteMode = "main",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """PATCH with a merge patch or a JSON patch, then the same checks as a replace.

        Raises:
            ApiError: 404 when absent, 409 on a stale resourceVersion in the patch, 400/422 for
                a patch that is malformed or does not apply.
        """
        with self._lock:
            old = self._existing(rtype, namespace, name)
            patched = objects.apply_patch(objects.render(rtype, old), patch_type, patch)
            objects.check_patched_kind(rtype, patched)
            new = objects.prepare_update(rtype, old, patched, mode)
            return self._commit(rtype, (namespace or "", name), old, new, dry_run)

    def delete(
        self, rtype: ResourceType, namespace: str | None, name: str, *, dry_run: bool = False
    ) -> dict[str, Any]:
        """Delete an object; with finalizers only mark it (deletionTimestamp) until they go.

        Raises:
            ApiError: 404 when absent.
        """
        with self._lock:
            key = (namespace or "", name)
            old = self._existing(rtype, namespace, name)
            if dry_run or old["metadata"].get("deletionTimestamp"):
                return objects.render(rtype, old)
            if old["metadata"].get("finalizers"):
                marked = objects.mark_deleted(old, self.clock())
                return self._commit(rtype, key, old, marked, False)
            return objects.render(rtype, self._remove(rtype, key))

    def watch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        selector: Selector,
        since: str,
        callback: WatchCallback,
        *,
        send_initial: bool | None = None,
    ) -> tuple[list[tuple[str, dict[str, Any]]], Callable[[], None]]:
        """Start watching: the events to send first, and a function that stops the callbacks.

        `since` "" or "0" gives a synthetic ADDED per current object; a resourceVersion gives
        the kept events after it. `send_initial` (a watch list, `sendInitialEvents`): True sends
        an ADDED per current object then a BOOKMARK annotated `k8s.io/initial-events-end`
        (k8s.io/apiserver pkg/storage/cacher/cache_watcher.go); False sends no current state,
        only what changes after `since` (after now when it is empty). Later events go to
        `callback(type, object)`.

        Raises:
            ApiError: 400 for an unreadable resourceVersion, 410 when it is older than the
                kept history.
        """
        watcher = Watcher(rtype, namespace, selector, callback)
        with self._lock:
            if send_initial or (send_initial is None and since in ("", "0")):
                if since not in ("", "0"):
                    parse_rv(since)
                bucket = self._objects.get(rtype.storage_key, {})
                keys = sorted(k for k, _ in self._matching(rtype, namespace, selector))
                first = [("ADDED", objects.render(rtype, bucket[k])) for k in keys]
                if send_initial:
                    first.append(("BOOKMARK", bookmark(rtype, self._rv, initial_events_end=True)))
            elif since in ("", "0"):
                first = []
            else:
                first = self._replay(watcher, parse_rv(since))
            self._watchers.setdefault(rtype.storage_key, {})[watcher] = None

        def unsubscribe() -> None:
            with self._lock:
                self._watchers.get(rtype.storage_key, {}).pop(watcher, None)

        return first, unsubscribe

    def _existing(self, rtype: ResourceType, namespace: str | None, name: str) -> Stored:
        obj = self._objects.get(rtype.storage_key, {}).get((namespace or "", name))
        if obj is None:
            raise st.not_found(rtype.plural, rtype.group, name)
        return obj

    def _matching(
        self, rtype: ResourceType, namespace: str | None, selector: Selector
    ) -> Iterator[tuple[_ObjectKey, Stored]]:
        for key, obj in self._objects.get(rtype.storage_key, {}).items():
            if (namespace is None or key[0] == namespace) and selector.matches(obj):
                yield key, obj

    def _replay(self, watcher: Watcher, since: int) -> list[tuple[str, dict[str, Any]]]:
        if since < self._compacted:
            raise st.gone(str(since), self._compacted + 1)
        views = (view_change(watcher, change) for change in self._history if change.rv > since)
        return [view for view in views if view is not None]

    def _commit(
        self, rtype: ResourceType, key: _ObjectKey, old: Stored | None, new: Stored, dry_run: bool
    ) -> dict[str, Any]:
        if old is not None and objects.is_unchanged(old, new):
            return objects.render(rtype, old)
        if dry_run:
            new["metadata"]["resourceVersion"] = (
                (old or {}).get("metadata", {}).get("resourceVersion", "")
            )
            return objects.render(rtype, new)
        metadata = new["metadata"]
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers"):
            self._objects[rtype.storage_key][key] = new
            return objects.render(rtype, self._remove(rtype, key))
        self._rv += 1
        metadata["resourceVersion"] = str(self._rv)
        self._objects.setdefault(rtype.storage_key, {})[key] = new
        self._record(
            Change(self._rv, "ADDED" if old is None else "MODIFIED", rtype.storage_key, old, new)
        )
        if rtype == CRD_TYPE:
            self._refresh_types()
        return objects.render(rtype, new)

    def _remove(self, rtype: ResourceType, key: _ObjectKey) -> Stored:
        old = self._objects[rtype.storage_key].pop(key)
        self._rv += 1
        gone = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self._rv)}}
        self._record(Change(self._rv, "DELETED", rtype.storage_key, old, gone))
        if rtype == CRD_TYPE:
            self._drop_crd_objects(old)
        elif rtype.kind == "Namespace" and rtype.group == "":
            self._drop_namespace(key[1])
        return gone

    def _drop_crd_objects(self, crd: Stored) -> None:
        self._refresh_types()
        for served in types_from_crd(crd)[:1]:
            for key in list(self._objects.get(served.storage_key, {})):
                self._remove(served, key)

    def _drop_namespace(self, namespace: str) -> None:
        for rtype in [t for t in self.registry.all() if t.namespaced]:
            for key in [k for k in self._objects.get(rtype.storage_key, {}) if k[0] == namespace]:
                self._remove(rtype, key)

    def _refresh_types(self) -> None:
        self.registry.refresh(self._objects.get(CRD_TYPE.storage_key, {}).values())

    def _record(self, change: Change) -> None:
        if len(self._history) == self._history.maxlen:
            self._compacted = self._history[0].rv
        self._history.append(change)
        for watcher in list(self._watchers.get(change.storage_key, {})):
            view = view_change(watcher, change)
            if view is not None:
                watcher.callback(*view)
