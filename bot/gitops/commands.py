"""`/kai reconcile`, `sync`, `suspend` and `resume KIND` as the slash command reads them
(docs/design.md §1.3): their parsed types, parsers, usage and help lines. Pure.

`resume KIND NS/NAME` extends KEDA's `resume` (`bot.keda.commands`): with a Flux KIND it is ours,
without one it stays KEDA's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from bot.commands.grammar import Args
from bot.commands.kinds import (
    FLUX_KIND_WORDS,
    FLUX_KINDS,
    KIND_LINE,
    KIND_WORDS,
    KINDS,
    FluxKind,
    ReconcilableKind,
    listed,
)
from bot.commands.registry import Extension, Subcommand
from bot.core import errors

_WITH_SOURCE_KINDS = ("HelmRelease", "Kustomization")


@dataclass(frozen=True)
class Reconcile:
    kind: ReconcilableKind
    namespace: str
    name: str
    with_source: bool = False
    hard: bool = False
    cluster: str | None = None
    force: bool = False  # HelmRelease: forceAt, as `flux reconcile hr --force`
    reset: bool = False  # HelmRelease: resetAt, as `flux reconcile hr --reset`


@dataclass(frozen=True)
class ReconcileShortcut:
    """`reconcile kai|keda`: whatever GitOps object deploys that component."""

    target: Literal["kai", "keda"]
    with_source: bool = False
    hard: bool = False
    cluster: str | None = None
    force: bool = False  # HelmRelease: forceAt, as `flux reconcile hr --force`
    reset: bool = False  # HelmRelease: resetAt, as `flux reconcile hr --reset`


@dataclass(frozen=True)
class Suspend:
    """`suspend KIND NS/NAME [for DURATION] [REASON...]`: Flux `spec.suspend: true`."""

    kind: FluxKind
    namespace: str
    name: str
    duration: timedelta | None  # None: until resumed
    reason: str
    cluster: str | None = None


@dataclass(frozen=True)
class FluxResume:
    """`resume KIND NS/NAME` with a Flux KIND (without one, `resume` is KEDA's `Resume`)."""

    kind: FluxKind
    namespace: str
    name: str
    cluster: str | None = None


@dataclass(frozen=True)
class Sync:
    namespace: str
    name: str
    cluster: str | None = None


def parse_reconcile(args: Args) -> Reconcile | ReconcileShortcut:
    flags = args.take_flags("--with-source", "--hard", "--force", "--reset")
    with_source, hard = "--with-source" in flags, "--hard" in flags
    force, reset = "--force" in flags, "--reset" in flags
    word = args.take_word("a KIND and NAMESPACE/NAME, or kai or keda").lower()
    if word in ("kai", "keda"):
        target: Literal["kai", "keda"] = "kai" if word == "kai" else "keda"
        cluster = args.finish()
        return ReconcileShortcut(target, with_source, hard, cluster, force, reset)
    kind = KINDS.get(word)
    if kind is None:
        raise args.bad(f"unknown kind {word!r} (expected one of {listed(KIND_WORDS)})")
    if with_source and kind not in _WITH_SOURCE_KINDS:
        raise args.bad(f"--with-source is only for helmrelease and kustomization, not {word}")
    if hard and kind != "Application":
        raise args.bad(f"--hard is only for application (Argo CD hard refresh), not {word}")
    for flag in sorted({"--force", "--reset"} & flags):
        if kind != "HelmRelease":
            raise args.bad(f"{flag} is only for helmrelease (as flux reconcile hr), not {word}")
    namespace, name = args.take_object()
    return Reconcile(kind, namespace, name, with_source, hard, args.finish(), force, reset)


def parse_sync(args: Args) -> Sync:
    args.take_flags()
    namespace, name = args.take_object()
    return Sync(namespace, name, args.finish())


def parse_suspend(args: Args) -> Suspend:
    args.take_flags()
    kind = _take_flux_kind(args)
    if kind is None:
        raise _flux_kind_needed(args)
    namespace, name = args.take_object()
    duration = args.take_for_duration()
    reason = args.take_reason()
    return Suspend(kind, namespace, name, duration, reason, args.finish())


def parse_flux_resume(args: Args) -> FluxResume | None:
    """`resume KIND NS/NAME`; None without a Flux KIND (then it is KEDA's `resume`)."""
    args.take_flags()
    kind = _take_flux_kind(args)
    if kind is None:
        return None
    namespace, name = args.take_object()
    return FluxResume(kind, namespace, name, args.finish())


def _take_flux_kind(args: Args) -> FluxKind | None:
    """A leading Flux KIND word, or None (for `resume`, no KIND means KEDA's resume)."""
    word = args.words[0].lower() if args.words else ""
    if word in ("application", "app"):
        raise args.bad(
            f"{args.sub} is for Flux objects; an Argo CD Application stops syncing when its "
            "automated sync policy is turned off in Git"
        )
    return FLUX_KINDS[args.words.pop(0).lower()] if word in FLUX_KINDS else None


def _flux_kind_needed(args: Args) -> errors.BadCommand:
    kinds = listed(FLUX_KIND_WORDS)
    word = args.words[0] if args.words else ""
    if not word or "/" in word:
        return args.bad(f"{args.sub} needs a Flux KIND ({kinds}) before NAMESPACE/NAME")
    return args.bad(f"unknown kind {word.lower()!r} (expected one of {kinds})")


SUBCOMMANDS = (
    Subcommand(
        "suspend",
        parse_suspend,
        "{command} suspend KIND NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "  e.g. {command} suspend hr flux-system/kai-scheduler for 2h hotfix by hand\n"
        f"{KIND_LINE}"
        "        ocirepository|ocirepo (Flux stops reconciling it: spec.suspend: true)\n"
        "  DURATION: 30m, 2h, 1d, 1h30m; then it resumes by itself (and reconciles)\n"
        "  REASON: free text, posted in the channel and recorded on the object",
        "suspend a Flux object (Flux stops reconciling it), optionally for a time; asks to confirm",
        operator=True,
        makes=(Suspend,),
    ),
    Subcommand(
        "reconcile",
        parse_reconcile,
        "{command} reconcile KIND NAMESPACE/NAME [--with-source] [--hard]\n"
        "{command} reconcile helmrelease|hr NAMESPACE/NAME --force|--reset\n"
        "{command} reconcile kai|keda [--with-source] [--hard]\n"
        f"{KIND_LINE}"
        "        ocirepository|ocirepo, application|app (Argo CD refresh)\n"
        "  kai|keda: the GitOps object that deploys KAI Scheduler or KEDA\n"
        "  --with-source: helmrelease and kustomization only, reconciles the source first\n"
        "  --hard: application only, an Argo CD hard refresh\n"
        "  --force / --reset: helmrelease only, a one-off install or upgrade / the failure\n"
        "        counts start over (as flux reconcile hr --force / --reset)",
        "make Flux reconcile an object now, or Argo CD refresh an Application",
        operator=True,
        makes=(Reconcile, ReconcileShortcut),
    ),
    Subcommand(
        "sync",
        parse_sync,
        "{command} sync NAMESPACE/NAME   (Argo CD Application sync)",
        "sync an Argo CD Application; asks to confirm",
        operator=True,
        makes=(Sync,),
    ),
)
EXTENSIONS = (
    Extension(
        "resume",
        parse_flux_resume,
        "{command} resume KIND NAMESPACE/NAME   (Flux: a suspended object, then a reconcile)\n"
        f"{KIND_LINE}"
        "        ocirepository|ocirepo; without a Flux KIND, resume means KEDA",
        "resume a paused ScaledJob or ScaledObject, or with a Flux KIND a suspended Flux "
        "object; asks to confirm",
        makes=(FluxResume,),
    ),
)
