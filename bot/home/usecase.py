"""Reads for the Home tab on one cluster: what is paused or suspended there.

The use-case layer: one list per (kind, namespace or all namespaces) at once, through the
`KubeReader` port. A kind the cluster does not serve (404: Flux or KEDA not installed) has
nothing held and is skipped quietly; any other failure becomes a note on the tab, never a
failed tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bot.core import errors
from bot.core.models import RawObject
from bot.home import assemble
from bot.home.model import HeldObject
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader

Place = tuple[ResourceRef, str | None]  # a resource type and a namespace (None: every one)


async def read_held(
    kube: KubeReader, keda_places: Sequence[Place], flux_places: Sequence[Place]
) -> tuple[list[HeldObject], list[str]]:
    """Paused KEDA objects and suspended Flux objects in those places, and what failed."""
    notes: list[str] = []

    async def read(place: Place) -> list[RawObject]:
        ref, namespace = place
        try:
            return await kube.list_objects(ref, namespace)
        except errors.KubeNotFound:
            return []
        except errors.KubeError as e:
            where = namespace or "all namespaces"
            notes.append(f"{kube.cluster}: cannot list {ref.qualified} in {where}: {e}")
            return []

    keda_pages = await asyncio.gather(*(read(p) for p in keda_places))
    flux_pages = await asyncio.gather(*(read(p) for p in flux_places))
    held = assemble.paused_objects((o for page in keda_pages for o in page), kube.cluster)
    held += assemble.suspended_objects((o for page in flux_pages for o in page), kube.cluster)
    return held, notes
