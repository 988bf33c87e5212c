"""Reads for `/kai list` and for the not-found hint: one list per namespace (or one across the
cluster), and name lookups that never fail the command they help.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core import conditions as c
from bot.core import errors
from bot.core.models import RawObject, Verdict
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader
from bot.listing.order import worst_first_key
from bot.rules import evaluate_object


@dataclass(frozen=True)
class Found:
    """An object of the name looked for: its kind, namespace and name."""

    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Listed:
    """One object as listed, with its verdict."""

    verdict: Verdict
    obj: RawObject


async def list_verdicts(
    kube: KubeReader, ref: ResourceRef, namespaces: Sequence[str] | None
) -> list[Listed]:
    """Every object of `ref` in `namespaces` (None: across the cluster) with its verdict, worst
    first. One paged list per namespace, or one in all.

    Raises:
        KubeError: unreachable, or a list is forbidden (cluster-wide lists need a ClusterRole).
    """
    if namespaces is None:
        pages = [await kube.list_objects(ref)]
    else:
        pages = list(await asyncio.gather(*(kube.list_objects(ref, ns) for ns in namespaces)))
    listed = [Listed(evaluate_object(obj), obj) for page in pages for obj in page]
    return sorted(listed, key=lambda x: worst_first_key(x.verdict))


async def list_names(kube: KubeReader, ref: ResourceRef, namespace: str | None) -> list[Found]:
    """Every object of `ref` in `namespace` (None: across the cluster, falling back to nothing
    when that is forbidden), read metadata-only; a read that fails gives none, since this only
    adds a hint to a reply that already says what is wrong."""
    try:
        listed = await kube.list_objects(ref, namespace, metadata_only=True, page_size=None)
    except errors.KubeError:
        return []
    return [Found(ref.kind, c.object_namespace(o) or "", c.object_name(o)) for o in listed]


async def find_named(
    kube: KubeReader, name: str, places: Sequence[tuple[ResourceRef, str]]
) -> list[Found]:
    """Objects called `name` in each (resource type, namespace) place, read metadata-only with a
    field selector; a place that cannot be read (forbidden, absent type) is skipped, since this
    only adds a hint to a reply that already says what is wrong."""

    async def look(ref: ResourceRef, namespace: str) -> list[Found]:
        try:
            listed = await kube.list_objects(
                ref,
                namespace,
                field_selector=f"metadata.name={name}",
                metadata_only=True,
                page_size=None,
            )
        except errors.KubeError:
            return []
        return [
            Found(ref.kind, c.object_namespace(o) or namespace, c.object_name(o)) for o in listed
        ]

    found = await asyncio.gather(*(look(ref, ns) for ref, ns in dict.fromkeys(places)))
    return [f for group in found for f in group if f.name == name]
