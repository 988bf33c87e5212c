"""What a reconcile, refresh or sync acts on: the target object and the user's resolved request.

Pure: resolves `reconcile KIND NS/NAME`, the `kai|keda` shortcuts (from `gitops` settings) and
`sync` to one object on one cluster, without touching it. Also the words every step ends in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.access.outcomes import AuditOutcome
from bot.commands.kinds import short_word
from bot.config.settings import Settings
from bot.core import errors
from bot.gitops import kinds
from bot.gitops.commands import Reconcile, ReconcileShortcut, Sync
from bot.kube.kinds import ResourceRef

REQUESTED_BY = "kai-chatops/requested-by"
REQUESTED_WHEN = "kai-chatops/requested-at"
_WITH_SOURCE_KINDS = ("HelmRelease", "Kustomization")

StepState = Literal[
    "succeeded",
    "failed",
    "unknown",
    "timed out",
    "skipped",
    "not started",
    "blocked",
    "not read back",  # the request was written; what followed could not be read (docs/design.md §2)
]

# How a step ends, as the audit record's outcome (docs/design.md §2 "Safety": `unknown` when the
# result
# could not be read back). The one mapping: `/kai reconcile`, refresh, sync and Flux resume.
_AUDIT_OUTCOMES: dict[StepState, AuditOutcome] = {
    "succeeded": "ok",
    "skipped": "ok",
    "failed": "failed",
    "not started": "failed",  # nothing was requested: an earlier step did not succeed
    "unknown": "unknown",  # finished without a Ready condition: its result cannot be told
    "timed out": "unknown",
    "blocked": "unknown",  # written, held by a sync window: it runs when the window opens
    "not read back": "unknown",
}


def audit_outcome(state: StepState) -> AuditOutcome:
    """The audit outcome (`ok`, `failed`, `unknown`) of a request that ended in `state`."""
    return _AUDIT_OUTCOMES[state]


@dataclass(frozen=True)
class GitopsTarget:
    """One Flux object or Argo CD Application on one cluster."""

    kind: str
    namespace: str
    name: str
    cluster: str

    def __post_init__(self) -> None:
        if self.kind not in kinds.BY_KIND:  # a Confirm or approval record we did not write
            raise errors.UserError(f"{self.kind!r} is not a GitOps kind; nothing was changed.")

    @property
    def ref(self) -> ResourceRef:
        return kinds.BY_KIND[self.kind]

    @property
    def is_application(self) -> bool:
        return self.kind == "Application"

    def describe(self) -> str:
        """`HelmRelease flux-system/kai-scheduler`."""
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(frozen=True)
class Request:
    """What the user asked for, resolved against the configuration."""

    target: GitopsTarget
    with_source: bool = False
    hard: bool = False
    force: bool = False
    reset: bool = False

    @property
    def flags(self) -> str:
        """The HelmRelease flags asked for, as typed: `--force --reset`, or ""."""
        given = (("--force", self.force), ("--reset", self.reset))
        return " ".join(flag for flag, asked in given if asked)

    @property
    def action(self) -> str:
        """The change as recorded and listed on the Home tab: `reconcile --force`, `reconcile`."""
        return f"reconcile {self.flags}".strip()


def command_for(action: str, target: GitopsTarget, command: str, default_cluster: str = "") -> str:
    """`/kai resume hr flux-system/kai-scheduler` (with `--cluster` when not the default)."""
    text = f"{command} {action} {short_word(target.kind)} {target.namespace}/{target.name}"
    return text if target.cluster == default_cluster else f"{text} --cluster {target.cluster}"


def resolve_request(parsed: Reconcile | ReconcileShortcut | Sync, settings: Settings) -> Request:
    """The object a reconcile, shortcut or sync acts on; touches no cluster.

    Raises:
        UserError: an unknown cluster, a shortcut that is not configured, or a flag that does not
            fit the configured kind.
    """
    cluster = settings.cluster(parsed.cluster).name
    if isinstance(parsed, Sync):
        return Request(GitopsTarget("Application", parsed.namespace, parsed.name, cluster))
    if isinstance(parsed, Reconcile):
        target = GitopsTarget(parsed.kind, parsed.namespace, parsed.name, cluster)
        return Request(target, parsed.with_source, parsed.hard, parsed.force, parsed.reset)
    shortcut = settings.gitops.shortcut(parsed.target)
    if shortcut is None:
        raise errors.UserError(
            f"`reconcile {parsed.target}` is not configured: set gitops.{parsed.target} in the "
            f"configuration, e.g. {{kind: helmrelease, name: flux-system/{parsed.target}}}."
        )
    target = GitopsTarget(shortcut.kind, shortcut.namespace, shortcut.name, cluster)
    if parsed.with_source and target.kind not in _WITH_SOURCE_KINDS:
        raise errors.UserError(f"--with-source is not for {target.describe()} (an Application).")
    if parsed.hard and not target.is_application:
        raise errors.UserError(f"--hard is only for Argo CD Applications, not {target.describe()}.")
    for flag, given in (("--force", parsed.force), ("--reset", parsed.reset)):
        if given and target.kind != "HelmRelease":
            raise errors.UserError(f"{flag} is only for HelmReleases, not {target.describe()}.")
    return Request(target, parsed.with_source, parsed.hard, parsed.force, parsed.reset)
