"""`/kai list KIND [NAMESPACE | --all-namespaces]`, and the hint every not-found reply gets.

Viewers may list; read-only, answered privately. `with_elsewhere_hint` wraps a runner so that
when the object it names does not exist (`ObjectMissing`: reconcile, sync, pause, resume, and
whatever raises it later), the reply names objects of that name in other kinds or namespaces,
with the command to type. One place for that hint, for every command that needs it.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_bolt.async_app import AsyncApp

from bot.commands.kinds import KINDS
from bot.config.settings import Settings
from bot.core import errors
from bot.gitops import kinds as gitops_kinds
from bot.gitops.commands import Reconcile, Sync
from bot.keda.commands import Pause, Resume
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.listing import render as render_listing
from bot.listing import usecase
from bot.listing.commands import ListObjects
from bot.listing.usecase import Found
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers import access
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
# Each kind's last word in the grammar is its short one (hr, ks, gitrepo, …, app).
_SHORT: dict[str, str] = {kind: word for word, kind in KINDS.items()}


async def run_list(parsed: ListObjects, deps: Deps, invocation: Invocation) -> Message:
    """`/kai list KIND`: one line per object with its verdict, worst first."""
    await access.require_viewer(deps, invocation.user_id, f"list {parsed.kind} objects")
    kube = deps.kube_for(parsed.cluster)
    namespaces = None if parsed.all_namespaces else home_namespaces(parsed, deps.settings)
    try:
        verdicts = await usecase.list_verdicts(kube, REFS[parsed.kind], namespaces)
    except errors.KubeForbidden as e:
        if namespaces is not None:
            raise
        raise errors.UserError(
            f"Listing {parsed.kind} across all namespaces needs a cluster-wide list grant, which "
            f"kai-chatops lacks here; name a namespace instead. ({e})"
        ) from e
    scope = "all namespaces" if namespaces is None else f"namespace {', '.join(namespaces)}"
    hint = f"`{deps.settings.slack.command} list {_word(parsed.kind)} NAMESPACE` narrows it."
    message = render_listing.list_message(
        verdicts, kind=_plural(parsed.kind), cluster=kube.cluster, scope=scope, hint=hint
    )
    return {**message, "response_type": "ephemeral"}


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


def with_elsewhere_hint(run: Runner) -> Runner:
    """`run`, whose not-found replies also name objects of that name elsewhere."""

    async def hinted(parsed: object, deps: Deps, invocation: Invocation) -> Message:
        try:
            return await run(parsed, deps, invocation)
        except errors.ObjectMissing as e:
            cluster = getattr(parsed, "cluster", None)
            found = await find_elsewhere(deps, cluster, e)
            command = deps.settings.slack.command
            verb = _verb(parsed)
            text = render_listing.elsewhere_text(
                found, e.name, lambda f: command_for(f, verb, command)
            )
            raise errors.UserError(f"{e}{text}") from e

    return hinted


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


def command_for(found: Found, verb: str, command: str) -> str:
    """The command that acts on `found`, in the spirit of what the user typed."""
    where = f"{found.namespace}/{found.name}"
    if found.kind in ("ScaledJob", "ScaledObject"):
        action = verb if verb in ("pause", "resume") else "pause"
        word = "scaledobject " if found.kind == "ScaledObject" else ""
        return f"{command} {action} {word}{where}"
    if found.kind == "Application" and verb == "sync":
        return f"{command} sync {where}"
    return f"{command} reconcile {_word(found.kind)} {where}"


def _word(kind: str) -> str:
    return _SHORT.get(kind) or {"ScaledJob": "sj", "ScaledObject": "so"}.get(kind, kind.lower())


def _plural(kind: str) -> str:
    return f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"


def _verb(parsed: object) -> str:
    names: Sequence[tuple[type, str]] = (
        (Reconcile, "reconcile"), (Sync, "sync"), (Pause, "pause"), (Resume, "resume"),
    )  # fmt: skip
    return next((verb for kind, verb in names if isinstance(parsed, kind)), "")


RUNNERS: dict[type, Runner] = {ListObjects: run_list}
EXECUTORS: dict[str, Executor] = {}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
