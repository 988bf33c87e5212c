"""`/kai list KIND [NAMESPACE | --all-namespaces]`, and the hint every not-found reply gets.

Viewers may list; read-only, answered privately. `with_elsewhere_hint` wraps a runner so that
when the object it names does not exist (`ObjectMissing`: reconcile, sync, pause, resume, and
whatever raises it later), the reply names objects of that name in other kinds or namespaces,
with the command to type. One place for that hint, for every command that needs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from slack_bolt.async_app import AsyncApp

from bot.commands.kinds import KINDS, short_word
from bot.config.settings import Settings
from bot.core import conditions as c
from bot.core import errors
from bot.core.models import RawObject
from bot.gitops import kinds as gitops_kinds
from bot.gitops import render_suspend
from bot.gitops.commands import FluxResume, Reconcile, Suspend, Sync
from bot.keda import render as render_keda
from bot.keda.commands import Pause, Resume
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.listing import render as render_listing
from bot.listing import usecase
from bot.listing.commands import ListObjects
from bot.listing.usecase import Found
from bot.rules import keda as keda_rules
from bot.rules.flux_suspend import read_suspend_record
from bot.service.deps import Deps
from bot.slack.blocks import Message, Text
from handlers.invocation import Executor, Invocation, Runner

# Where each kind lives unless told otherwise: Flux's and Argo CD's install namespaces (the
# namespaces deploy/ grants reads in); KEDA objects in keda.namespaces.
FLUX_NAMESPACE = "flux-system"
ARGOCD_NAMESPACE = "argocd"
REFS: dict[str, ResourceRef] = {
    **{kind: gitops_kinds.BY_KIND[kind] for kind in dict.fromkeys(KINDS.values())},
    "ScaledJob": kinds.SCALED_JOB,
    "ScaledObject": kinds.SCALED_OBJECT,
}


async def run_list(parsed: ListObjects, deps: Deps, invocation: Invocation) -> Message:
    """`/kai list KIND`: one line per object with its verdict, worst first."""
    await deps.gate.require_viewer(invocation.user_id, f"list {parsed.kind} objects")
    kube = deps.kube_for(parsed.cluster)
    suffix = cluster_suffix(parsed.cluster, deps.settings)
    namespaces = None if parsed.all_namespaces else home_namespaces(parsed, deps.settings)
    try:
        listed = await usecase.list_verdicts(kube, REFS[parsed.kind], namespaces)
    except errors.KubeForbidden as e:
        if namespaces is not None:
            raise
        raise errors.UserError(
            f"Listing {parsed.kind} across all namespaces needs a cluster-wide list grant, which "
            f"kai-chatops lacks here; name a namespace instead. ({e})"
        ) from e
    scope = "all namespaces" if namespaces is None else f"namespace {', '.join(namespaces)}"
    command = deps.settings.slack.command
    hint = f"`{command} list {short_word(parsed.kind)} NAMESPACE` narrows it."
    elsewhere = ""
    if not listed and namespaces is not None and _family(parsed.kind) != "argo":
        found = await usecase.list_names(kube, REFS[parsed.kind], None)
        list_in = f"{command} list {short_word(parsed.kind)}"
        elsewhere = render_listing.namespaces_text(
            found, _plural(parsed.kind), lambda f: f"{list_in} {f.namespace}" + suffix
        )
    now = deps.clock()
    message = render_listing.list_message(
        [_row(x, now) for x in listed],
        kind=_plural(parsed.kind),
        cluster=kube.cluster,
        scope=scope,
        hint=hint,
        elsewhere=elsewhere,
    )
    return {**message, "response_type": "ephemeral"}


def _row(listed: usecase.Listed, now: datetime) -> render_listing.Row:
    """The line of one object; a paused or suspended one says who did it, why and until when,
    in the words of the pause and suspend replies ("by hand" when there is no record)."""
    held = _held_words(listed.obj, now, md=True)
    return render_listing.Row(listed.verdict, held, str(_held_words(listed.obj, now, md=False)))


def _held_words(obj: RawObject, now: datetime, *, md: bool) -> Text:
    if _family(c.as_text(obj.get("kind"))) == "keda":
        state = keda_rules.read_pause_state(obj)
        return render_keda.pause_words(state, now, md=md) if state.paused else ""
    found = read_suspend_record(obj)
    return render_suspend.record_words(found, md=md) if found.suspended else ""


def home_namespaces(parsed: ListObjects, settings: Settings) -> list[str]:
    """The namespace given, else where the kind usually lives.

    Raises:
        UserError: a KEDA kind without a namespace while keda.namespaces is empty.
    """
    if parsed.namespace:
        return [parsed.namespace]
    homes = _homes(parsed.kind, settings)
    if not homes:
        raise errors.UserError(
            "keda.namespaces is empty in the configuration: give a NAMESPACE or --all-namespaces."
        )
    return homes


def cluster_suffix(cluster: str | None, settings: Settings) -> str:
    """` --cluster NAME` for a command suggested on a cluster other than the default, else ""."""
    return "" if cluster in (None, settings.clusters[0].name) else f" --cluster {cluster}"


def with_elsewhere_hint(run: Runner) -> Runner:
    """`run`, whose not-found replies also say what to type instead: the namespaces where an
    object of that kind and name exists, the closest names ("did you mean"), and objects of
    that name in other kinds, each as the command the user typed."""

    async def hinted(parsed: object, deps: Deps, invocation: Invocation) -> Message:
        try:
            return await run(parsed, deps, invocation)
        except errors.ObjectMissing as e:
            cluster = getattr(parsed, "cluster", None)
            same_kind, others = await asyncio.gather(
                _same_kind(deps, cluster, e), find_elsewhere(deps, cluster, e)
            )
            suffix = cluster_suffix(cluster, deps.settings)
            verb, command = _verb(parsed), deps.settings.slack.command
            missing = Found(e.kind, e.namespace, e.name)
            text = render_listing.missing_hint(
                missing, same_kind, others, lambda f: command_for(f, verb, command) + suffix
            )
            raise errors.UserError(f"{e}{text}") from e

    return hinted


async def _same_kind(deps: Deps, cluster: str | None, missing: errors.ObjectMissing) -> list[Found]:
    """Every object of the missing one's kind: across the cluster where deploy/ grants that list
    (Flux and KEDA kinds), else in the namespace typed."""
    ref = REFS.get(missing.kind)
    if ref is None:
        return []
    scope = missing.namespace if _family(missing.kind) == "argo" else None
    return await usecase.list_names(deps.kube_for(cluster), ref, scope)


async def find_elsewhere(
    deps: Deps, cluster: str | None, missing: errors.ObjectMissing
) -> list[Found]:
    """Objects named like the missing one: every kind in its home namespaces, and the kinds of
    the same family (Flux, Argo CD, KEDA) in the namespace typed as well."""
    places: list[tuple[ResourceRef, str]] = []
    for kind, ref in REFS.items():
        namespaces = _homes(kind, deps.settings)
        if _family(kind) == _family(missing.kind):
            namespaces.append(missing.namespace)
        places += [(ref, ns) for ns in dict.fromkeys(namespaces)]
    found = await usecase.find_named(deps.kube_for(cluster), missing.name, places)
    asked = (missing.kind, missing.namespace, missing.name)
    return [f for f in found if (f.kind, f.namespace, f.name) != asked]


def _homes(kind: str, settings: Settings) -> list[str]:
    if _family(kind) == "keda":
        return list(settings.keda.namespaces)
    return [ARGOCD_NAMESPACE if kind == "Application" else FLUX_NAMESPACE]


def _family(kind: str) -> str:
    if kind in ("ScaledJob", "ScaledObject"):
        return "keda"
    return "argo" if kind == "Application" else "flux"


# The verb of one family that does what a verb of another did: pausing a ScaledJob is what
# suspending a HelmRelease is.
_VERBS = {
    "flux": {
        "reconcile": "reconcile",
        "suspend": "suspend",
        "resume": "resume",
        "pause": "suspend",
    },
    "keda": {"pause": "pause", "resume": "resume", "suspend": "pause"},
    "argo": {"sync": "sync"},
}
_DEFAULT_VERBS = {"flux": "reconcile", "keda": "pause", "argo": "reconcile"}


def command_for(found: Found, verb: str, command: str) -> str:
    """The command that acts on `found`, with the verb the user typed where it fits."""
    where = f"{found.namespace}/{found.name}"
    family = _family(found.kind)
    action = _VERBS[family].get(verb, _DEFAULT_VERBS[family])
    if family == "keda":
        word = "scaledobject " if found.kind == "ScaledObject" else ""
        return f"{command} {action} {word}{where}"
    if action == "sync":
        return f"{command} sync {where}"
    return f"{command} {action} {short_word(found.kind)} {where}"


def _plural(kind: str) -> str:
    return f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"


def _verb(parsed: object) -> str:
    names: Sequence[tuple[type, str]] = (
        (Reconcile, "reconcile"), (Sync, "sync"), (Pause, "pause"), (Resume, "resume"),
        (Suspend, "suspend"), (FluxResume, "resume"),
    )  # fmt: skip
    return next((verb for kind, verb in names if isinstance(parsed, kind)), "")


RUNNERS: dict[type, Runner] = {ListObjects: run_list}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
