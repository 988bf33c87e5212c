"""The one list-then-watch route: how the bot follows a collection.

A collection (a kind, in one namespace or cluster-wide, narrowed by selectors) is listed
with the resourceVersion it was read at, then watched from that version; each event is handed
on and its version kept (bookmarks too), so a stream the server ends is watched again from
where it was, as client-go's reflector does (k8s.io/client-go tools/cache/reflector.go
`ListAndWatch`). A 410 Expired, or a handler that fails, forgets the version: the next pass
lists again, so nothing handed on is lost. The callers keep their own pace and failure policy:
the watched copies of `bot.kube.copies` (the alert checks' reads, the sweeps' when they read
through `CachedKube`) and the eviction notices (`bot.notices.watch`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from bot.core import errors
from bot.core.models import RawObject
from bot.kube.kinds import ResourceRef
from bot.kube.ports import CollectionFollower

OnListed = Callable[[list[RawObject]], Awaitable[None]]  # every object, as listed
Changed = Callable[[str, RawObject], Awaitable[None]]  # one watch event: (type, object)


def never() -> bool:
    return False


class ListThenWatch:
    """One collection as followed: `list()`, then `watch()` request after request."""

    def __init__(
        self,
        kube: CollectionFollower,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        listed: OnListed,
        changed: Changed,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = None,
    ) -> None:
        self.kube = kube
        self.ref = ref
        self.namespace = namespace if ref.namespaced else None
        self.listed = listed
        self.changed = changed
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.metadata_only = metadata_only
        self.page_size = page_size
        self.version = ""  # where the next watch starts; "" = list first
        self.watched = False  # its watch has sent an event since the last list

    def describe(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"cluster {self.kube.cluster}: {self.ref.plural}{where}"

    def forget(self) -> None:
        """List again before the next watch."""
        self.version = ""

    async def list(self) -> None:
        """List the collection, hand its objects to `listed`, and keep the version to watch
        from ("" when the cluster does not serve the kind).

        Raises:
            KubeError: the list failed; whatever `listed` raises (nothing kept: list again).
        """
        self.forget()
        items, version = await self.kube.list_versioned(
            self.ref,
            self.namespace,
            **self._labels(),
            field_selector=self.field_selector,
            metadata_only=self.metadata_only,
            page_size=self.page_size,
        )
        await self.listed(items)
        self.version, self.watched = version, False

    async def watch(self, seconds: float, *, stop: Callable[[], bool] = never) -> None:
        """One watch request from the version kept, for up to `seconds`, or until `stop()`
        holds after an event: each event handed to `changed`, then its version kept.

        Raises:
            KubeExpired: the version is gone (forgotten: list again). Other KubeErrors: the
                stream could not be made or broke (the version kept). Whatever `changed`
                raises (forgotten: list again).
        """
        changes = self.kube.watch_collection(
            self.ref,
            self.namespace,
            **self._labels(),
            field_selector=self.field_selector,
            resource_version=self.version,
            seconds=seconds,
        )
        try:
            async with contextlib.aclosing(changes):  # ends the request when we stop early
                async for kind, obj in changes:
                    await self._hand_on(kind, obj)
                    if stop():
                        return
        except errors.KubeExpired:
            self.forget()
            raise

    def _labels(self) -> dict[str, str]:
        """The label selector, asked only when given (a follower may not know of one)."""
        return {"label_selector": self.label_selector} if self.label_selector else {}

    async def _hand_on(self, kind: str, obj: RawObject) -> None:
        try:
            await self.changed(kind, obj)
        except Exception:
            self.forget()
            raise
        version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        self.version = version or self.version
        self.watched = True
