"""The parsed slash commands (docs/design.md §1.3): one frozen dataclass per subcommand.

Pure data; `bot.commands.grammar.parse_command` builds them. Every command carries `cluster` from
`--cluster NAME` (None: the first configured cluster).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal, TypeAlias

PauseKind = Literal["ScaledJob", "ScaledObject"]
ReconcileKind = Literal[
    "HelmRelease",
    "Kustomization",
    "GitRepository",
    "HelmRepository",
    "OCIRepository",
    "Application",
]
# The Flux kinds `suspend` and `resume KIND` take (as `flux suspend|resume`): not Application.
FluxKind = Literal[
    "HelmRelease",
    "Kustomization",
    "GitRepository",
    "HelmRepository",
    "OCIRepository",
]


@dataclass(frozen=True)
class Help:
    topic: str | None = None
    cluster: str | None = None


@dataclass(frozen=True)
class Health:
    cluster: str | None = None


@dataclass(frozen=True)
class ScaledJobs:
    namespace: str | None = None  # None and not all_namespaces: the configured keda.namespaces
    all_namespaces: bool = False
    cluster: str | None = None


@dataclass(frozen=True)
class Pause:
    kind: PauseKind
    namespace: str
    name: str
    duration: timedelta | None  # None: until resumed
    reason: str
    cluster: str | None = None


@dataclass(frozen=True)
class Resume:
    kind: PauseKind
    namespace: str
    name: str
    cluster: str | None = None


@dataclass(frozen=True)
class Reconcile:
    kind: ReconcileKind
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


@dataclass(frozen=True)
class Alerts:
    cluster: str | None = None


@dataclass(frozen=True)
class Ack:
    alert_id: str
    cluster: str | None = None


@dataclass(frozen=True)
class Silence:
    alert_id: str
    duration: timedelta
    reason: str = ""
    cluster: str | None = None


@dataclass(frozen=True)
class Unsilence:
    alert_id: str
    cluster: str | None = None


ListKind: TypeAlias = ReconcileKind | PauseKind


@dataclass(frozen=True)
class Diagnose:
    """`diagnose kai|keda|NAMESPACE/DEPLOYMENT`: `target` is kai, keda, or "" for a Deployment."""

    target: Literal["kai", "keda", ""]
    namespace: str = ""
    name: str = ""
    cluster: str | None = None


@dataclass(frozen=True)
class Queues:
    cluster: str | None = None


@dataclass(frozen=True)
class Pending:
    namespace: str | None = None  # None: every namespace
    all_namespaces: bool = False
    cluster: str | None = None


@dataclass(frozen=True)
class Why:
    namespace: str
    name: str  # a pod
    cluster: str | None = None


@dataclass(frozen=True)
class ListObjects:
    kind: ListKind
    namespace: str | None = None  # None and not all_namespaces: the kind's usual namespaces
    all_namespaces: bool = False
    cluster: str | None = None


Inspect: TypeAlias = Diagnose | Queues | Pending | Why | ListObjects  # read only
Query: TypeAlias = Help | Health | ScaledJobs | Alerts | Inspect  # read only: viewers may run these
Change: TypeAlias = (
    Pause | Resume | Reconcile | ReconcileShortcut | Sync | Suspend | FluxResume
)  # operators only
AlertAction: TypeAlias = Ack | Silence | Unsilence  # operators only
Command: TypeAlias = Query | Change | AlertAction
