"""`/kai list KIND` and the not-found hint: one list per namespace (or one across the cluster),
and name lookups that never fail the command they help.

I/O only through the `KubeReader` port; where each kind lives is `bot.listing.places`, the
words are `bot.listing.render`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from bot.commands.kinds import short_word
from bot.config.settings import Settings
from bot.core import conditions, errors
from bot.kube.kinds import ResourceRef
from bot.kube.ports import KubeReader
from bot.listing import places, render
from bot.listing.commands import ListObjects
from bot.listing.model import Found, Listed
from bot.listing.order import worst_first_key
from bot.rules import evaluate_object
from bot.slack.blocks import Message


async def list_kind(
    kube: KubeReader, settings: Settings, parsed: ListObjects, *, now: datetime
) -> Message:
    """`/kai list KIND`: one line per object with its verdict, worst first; when there is none
    in the namespaces read, where there are some.

    Raises:
        UserError: a KEDA kind with no namespace to read, or a list across all namespaces that
            kai-chatops may not make.
        KubeError: unreachable, or a list is forbidden.
    """
    suffix = places.cluster_suffix(parsed.cluster, settings)
    namespaces = None if parsed.all_namespaces else places.home_namespaces(parsed, settings)
    ref, kind = places.REFS[parsed.kind], places.plural(parsed.kind)
    try:
        listed = await list_verdicts(kube, ref, namespaces)
    except errors.KubeForbidden as e:
        if namespaces is not None:
            raise
        raise errors.UserError(
            f"Listing {parsed.kind} across all namespaces needs a cluster-wide list grant, which "
            f"kai-chatops lacks here; name a namespace instead. ({e})"
        ) from e
    scope = "all namespaces" if namespaces is None else f"namespace {', '.join(namespaces)}"
    list_in = f"{settings.slack.command} list {short_word(parsed.kind)}"
    elsewhere = ""
    if not listed and namespaces is not None and places.family(parsed.kind) != "argo":
        found = await list_names(kube, ref, None)
        elsewhere = render.namespaces_text(
            found, kind, lambda f: f"{list_in} {f.namespace}" + suffix
        )
    return render.list_message(
        [render.row_of(x, now) for x in listed],
        kind=kind,
        cluster=kube.cluster,
        scope=scope,
        hint=f"`{list_in} NAMESPACE` narrows it.",
        elsewhere=elsewhere,
    )


async def hint_for_missing(
    kube: KubeReader, settings: Settings, missing: errors.ObjectMissing, parsed: object
) -> str:
    """What to type instead of the command `parsed` whose object does not exist: the namespaces
    where an object of that kind and name exists, the closest names ("did you mean"), and
    objects of that name in other kinds, each as the command the user typed ("" for none)."""
    same_kind, others = await asyncio.gather(
        _same_kind(kube, missing), find_elsewhere(kube, settings, missing)
    )
    suffix = places.cluster_suffix(getattr(parsed, "cluster", None), settings)
    verb, command = places.verb_of(parsed), settings.slack.command
    asked = Found(missing.kind, missing.namespace, missing.name)
    return render.missing_hint(
        asked, same_kind, others, lambda f: places.command_for(f, verb, command) + suffix
    )


async def _same_kind(kube: KubeReader, missing: errors.ObjectMissing) -> list[Found]:
    """Every object of the missing one's kind: across the cluster where deploy/ grants that list
    (Flux and KEDA kinds), else in the namespace typed."""
    ref = places.REFS.get(missing.kind)
    if ref is None:
        return []
    scope = missing.namespace if places.family(missing.kind) == "argo" else None
    return await list_names(kube, ref, scope)


async def find_elsewhere(
    kube: KubeReader, settings: Settings, missing: errors.ObjectMissing
) -> list[Found]:
    """Objects named like the missing one: every kind in its home namespaces, and the kinds of
    the same family (Flux, Argo CD, KEDA) in the namespace typed as well."""
    where: list[tuple[ResourceRef, str]] = []
    for kind, ref in places.REFS.items():
        namespaces = places.homes(kind, settings)
        if places.family(kind) == places.family(missing.kind):
            namespaces.append(missing.namespace)
        where += [(ref, ns) for ns in dict.fromkeys(namespaces)]
    found = await find_named(kube, missing.name, where)
    asked = (missing.kind, missing.namespace, missing.name)
    return [f for f in found if (f.kind, f.namespace, f.name) != asked]


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
    return [
        Found(ref.kind, conditions.object_namespace(o) or "", conditions.object_name(o))
        for o in listed
    ]


async def find_named(
    kube: KubeReader, name: str, where: Sequence[tuple[ResourceRef, str]]
) -> list[Found]:
    """Objects called `name` in each (resource type, namespace) place of `where`, read
    metadata-only with a field selector; a place that cannot be read (forbidden, absent type)
    is skipped, since this only adds a hint to a reply that already says what is wrong."""

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
            Found(ref.kind, conditions.object_namespace(o) or namespace, conditions.object_name(o))
            for o in listed
        ]

    found = await asyncio.gather(*(look(ref, ns) for ref, ns in dict.fromkeys(where)))
    return [f for group in found for f in group if f.name == name]
