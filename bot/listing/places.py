"""Where each kind `/kai list` and the not-found hint read lives, and the command a suggestion
offers for an object: its family's verb for the one the user typed (pausing a ScaledJob is what
suspending a HelmRelease is), its short KIND word, `--cluster` off the default cluster.

Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands.kinds import KINDS, short_word
from bot.config.settings import Settings
from bot.core import errors
from bot.gitops import kinds as gitops_kinds
from bot.gitops.commands import FluxResume, Reconcile, Suspend, Sync
from bot.keda.commands import Pause, Resume
from bot.kube import kinds
from bot.kube.kinds import ResourceRef
from bot.listing.commands import ListObjects
from bot.listing.model import Found

# Where each kind lives unless told otherwise: Flux's and Argo CD's install namespaces (the
# namespaces deploy/ grants reads in); KEDA objects in keda.namespaces.
FLUX_NAMESPACE = "flux-system"
ARGOCD_NAMESPACE = "argocd"
REFS: dict[str, ResourceRef] = {
    **{kind: gitops_kinds.BY_KIND[kind] for kind in dict.fromkeys(KINDS.values())},
    "ScaledJob": kinds.SCALED_JOB,
    "ScaledObject": kinds.SCALED_OBJECT,
}

# The verb of one family that does what a verb of another did.
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


def home_namespaces(parsed: ListObjects, settings: Settings) -> list[str]:
    """The namespace given, else where the kind usually lives.

    Raises:
        UserError: a KEDA kind without a namespace while keda.namespaces is empty.
    """
    if parsed.namespace:
        return [parsed.namespace]
    found = homes(parsed.kind, settings)
    if not found:
        raise errors.UserError(
            "keda.namespaces is empty in the configuration: give a NAMESPACE or --all-namespaces."
        )
    return found


def homes(kind: str, settings: Settings) -> list[str]:
    """Where objects of `kind` usually live."""
    if family(kind) == "keda":
        return list(settings.keda.namespaces)
    return [ARGOCD_NAMESPACE if kind == "Application" else FLUX_NAMESPACE]


def family(kind: str) -> str:
    """`keda`, `argo` or `flux`: whose kind it is."""
    if kind in ("ScaledJob", "ScaledObject"):
        return "keda"
    return "argo" if kind == "Application" else "flux"


def plural(kind: str) -> str:
    return f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"


def cluster_suffix(cluster: str | None, settings: Settings) -> str:
    """` --cluster NAME` for a command suggested on a cluster other than the default, else ""."""
    return "" if cluster in (None, settings.clusters[0].name) else f" --cluster {cluster}"


def command_for(found: Found, verb: str, command: str) -> str:
    """The command that acts on `found`, with the verb the user typed where it fits."""
    where = f"{found.namespace}/{found.name}"
    kind_family = family(found.kind)
    action = _VERBS[kind_family].get(verb, _DEFAULT_VERBS[kind_family])
    if kind_family == "keda":
        word = "scaledobject " if found.kind == "ScaledObject" else ""
        return f"{command} {action} {word}{where}"
    if action == "sync":
        return f"{command} sync {where}"
    return f"{command} {action} {short_word(found.kind)} {where}"


def verb_of(parsed: object) -> str:
    """The verb the user typed, for the commands that act on one object ("" for the rest)."""
    names: Sequence[tuple[type, str]] = (
        (Reconcile, "reconcile"), (Sync, "sync"), (Pause, "pause"), (Resume, "resume"),
        (Suspend, "suspend"), (FluxResume, "resume"),
    )  # fmt: skip
    return next((verb for kind, verb in names if isinstance(parsed, kind)), "")
