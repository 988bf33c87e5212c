"""A cluster's gateway for one person's change: its patches sent as that person, the rest as
the bot (`access.impersonate`).

The use-cases take a `KubeWriter`; handing them this one instead of the bare gateway makes every
patch of that change carry the `Impersonation` value, and nothing else: the reads before and
after (the object, following the controller) stay the bot's own, so a person's missing `get` or
`watch` never hides the result of a change they were allowed to make.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol, cast

from bot.core import errors
from bot.core.models import RawObject
from bot.kube.identity import Impersonation
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeWatcher, KubeWriter


class Gateway(KubeWriter, KubeWatcher, Protocol):
    """What `bot.kube.gateway.KubeGateway` offers: reads, watches and writes."""


def acting_as(kube: KubeWriter, identity: Impersonation) -> ActingAs:
    """`kube` with its patches sent as `identity`; it watches when `kube` does."""
    if isinstance(kube, KubeWatcher):
        return WatchingActingAs(cast("Gateway", kube), identity)
    return ActingAs(kube, identity)


class ActingAs:
    """`kube` for reads, `kube` with `identity` for patches."""

    def __init__(self, kube: KubeWriter, identity: Impersonation) -> None:
        self.kube = kube
        self.identity = identity
        self.cluster = kube.cluster
        # Who sends it: the gateway's own identity in the cluster, when it can tell.
        self.impersonator = str(getattr(kube, "authenticated_as", "") or "")

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
        """The patch, sent as this change's person (an explicit `acting_as` wins); an error
        carries in its `details` whom it was sent as, for the action's audit line."""
        person = acting_as or self.identity
        try:
            return await self.kube.patch_object(
                ref, name, namespace, body, json_patch=json_patch, acting_as=person
            )
        except errors.KubeError as e:
            e.details = {**e.details, **person.audit_details(self.impersonator)}
            raise

    def audit_details(self) -> dict[str, str]:
        """Whom this change's writes are sent as, and by whom, for its audit line."""
        return self.identity.audit_details(self.impersonator)

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject:
        return await self.kube.create_object(ref, namespace, body)

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        return await self.kube.get_object(ref, name, namespace)

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
        return await self.kube.list_objects(
            ref,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            metadata_only=metadata_only,
            page_size=page_size,
        )

    async def server_version(self) -> str:
        return await self.kube.server_version()

    async def read_pod_log(
        self, namespace: str, pod: str, *, container: str, previous: bool, tail_lines: int
    ) -> str:
        return await self.kube.read_pod_log(
            namespace, pod, container=container, previous=previous, tail_lines=tail_lines
        )


class WatchingActingAs(ActingAs):
    """`ActingAs` over a gateway that watches (the real one): follows with the bot's watch."""

    def __init__(self, kube: Gateway, identity: Impersonation) -> None:
        super().__init__(kube, identity)
        self.watcher = kube

    def watch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        *,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[RawObject | None, None]:
        """The bot's own watch."""
        return self.watcher.watch_object(
            ref, name, namespace, resource_version=resource_version, seconds=seconds
        )
