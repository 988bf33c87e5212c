"""The Kubernetes objects the bot keeps its own state in (a Lease, a ConfigMap), and the calls.

`ObjectStore` is the narrow slice of `bot.kube.KubeGateway` that the Lease and the ConfigMap
store use, so their tests may fake it. Pure: types only.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from bot.kinds import ResourceRef
from bot.models import RawObject

LEASE = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
CONFIG_MAP = ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)


@runtime_checkable
class ObjectStore(Protocol):
    """Read, create and merge-patch one object (satisfied by `bot.kube.KubeGateway`)."""

    cluster: str

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None: ...

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject: ...

    async def patch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        body: Any,
        *,
        json_patch: bool = False,
    ) -> RawObject: ...
