"""What the use-cases need of a cluster, as Protocols (`bot.kube.gateway` satisfies them all).

One definition for every feature, so a fake or another client only has to match these; each
signature is written here once, and the wrappers (`bot.kube.informer.CachedKube`,
`bot.kube.acting.ActingAs`) hand the gateway's own methods on rather than restate them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol, runtime_checkable

from bot.core.models import RawObject
from bot.kube.identity import Impersonation
from bot.kube.kinds import ResourceRef

# One event of a watch: ("ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK", object); a bookmark's
# object carries only the resourceVersion to resume from.
WatchEvent = tuple[str, RawObject]


@runtime_checkable
class KubeReader(Protocol):
    """Reads: one object (None on 404), a list (following pages), and a reachability probe."""

    cluster: str

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None: ...

    async def list_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = ...,
    ) -> list[RawObject]: ...

    async def server_version(self) -> str: ...


@runtime_checkable
class PodLogReader(KubeReader, Protocol):
    """Reads plus a container's log tail (`pods/log`), which answers text, not an object."""

    async def read_pod_log(
        self, namespace: str, pod: str, *, container: str, previous: bool, tail_lines: int
    ) -> str: ...


@runtime_checkable
class KubePatcher(Protocol):
    """The one signature of a patch: a JSON merge patch (RFC 7386; `None` deletes a key), or a
    JSON patch (RFC 6902) with `json_patch`; sent as `acting_as` (impersonation headers) when
    given, else as the bot itself. Include `metadata.resourceVersion` for optimistic
    concurrency (`KubeConflict`)."""

    async def patch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        body: Any,
        *,
        json_patch: bool = False,
        acting_as: Impersonation | None = None,
    ) -> RawObject: ...


@runtime_checkable
class KubeWriter(PodLogReader, KubePatcher, Protocol):
    """Reads (logs too) plus the two writes the bot makes: a patch, and a create.

    A patch may be sent as a person (`acting_as`, `access.impersonate`); reads and creates are
    always the bot's own.
    """

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject: ...


@runtime_checkable
class KubeWatcher(KubeReader, Protocol):
    """Reads plus a watch of one object: each new state after a resourceVersion (None once
    deleted), for up to `seconds`. Optional: a gateway without it is polled."""

    def watch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        *,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[RawObject | None, None]: ...


@runtime_checkable
class CollectionFollower(KubeReader, Protocol):
    """Reads plus what list-then-watch needs (`bot.kube.listwatch`): the whole collection
    (narrowed by label and field selectors, paged when `page_size` is given) with the
    resourceVersion it was read at, then each event after a version, for up to `seconds`."""

    async def list_versioned(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = None,
    ) -> tuple[list[RawObject], str]: ...

    def watch_collection(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[WatchEvent, None]: ...
