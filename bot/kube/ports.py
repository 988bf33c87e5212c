"""What the use-cases need of a cluster, as Protocols (`bot.kube.gateway` satisfies both).

One definition for every feature, so a fake or another client only has to match these.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol, runtime_checkable

from bot.core.models import RawObject
from bot.kube.identity import Impersonation
from bot.kube.kinds import ResourceRef


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
class KubeWriter(PodLogReader, Protocol):
    """Reads (logs too) plus the two writes the bot makes: merge (or JSON) patch, and create.

    A patch may be sent as a person (`acting_as`, `access.impersonate`); reads and creates are
    always the bot's own.
    """

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
class CollectionWatcher(KubeReader, Protocol):
    """Reads plus list-then-watch of a collection narrowed by a field selector: the list with
    its resourceVersion, then each change after it as (type, object), for up to `seconds`."""

    async def list_for_watch(
        self, ref: ResourceRef, namespace: str | None = None, *, field_selector: str
    ) -> tuple[list[RawObject], str]: ...

    def watch_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        field_selector: str,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[tuple[str, RawObject], None]: ...
