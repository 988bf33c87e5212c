"""The settings of docs/design.md §1.4 as frozen dataclasses: one per section of the YAML file,
with its defaults. Pure data; `bot.config.parse` reads them from the parsed document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from bot.core import errors


@dataclass(frozen=True)
class ClusterSettings:
    """One cluster; without kubeconfig and context the in-cluster service account is used."""

    name: str
    kubeconfig: str | None = None
    context: str | None = None

    @property
    def in_cluster(self) -> bool:
        return self.kubeconfig is None and self.context is None


@dataclass(frozen=True)
class SlackSettings:
    command: str = "/kai"
    alert_channel: str = ""


@dataclass(frozen=True)
class AccessSettings:
    """Slack user IDs (`U…`, `W…`), user-group IDs (`S…`) or handles (`@oncall`)."""

    operators: tuple[str, ...] = ()
    viewers: tuple[str, ...] | None = None  # None: everyone may look
    impersonate: Literal["none", "email", "id"] = "none"  # whose identity changes are sent as
    approval: ApprovalSettings | None = None  # None: no change waits for a second operator


@dataclass(frozen=True)
class ApprovalSettings:
    """Changes on `clusters` run only after one of `approvers` (not the requester) approves."""

    clusters: tuple[str, ...]
    approvers: tuple[str, ...]


@dataclass(frozen=True)
class KaiSettings:
    namespace: str = "kai-scheduler"
    progressing_timeout: timedelta = timedelta(minutes=10)


@dataclass(frozen=True)
class KedaSettings:
    namespaces: tuple[str, ...] = ()  # where pause/resume is allowed; empty: nowhere
    apiservice: str = "v1beta1.external.metrics.k8s.io"


@dataclass(frozen=True)
class AlertSettings:
    interval: timedelta = timedelta(seconds=30)
    hold: timedelta = timedelta(seconds=60)
    repeat: timedelta = timedelta(hours=4)
    failures_before_alert: int = 3  # failed checks in a row before "cannot check cluster X"
    max_silence: timedelta = timedelta(days=7)  # the longest silence accepted
    mention: tuple[str, ...] = ()  # who the root of a critical alert mentions (IDs, @handles)
    escalate_after: timedelta | None = None  # None: never escalate
    escalate_to: tuple[str, ...] = ()  # who the escalation reply mentions
    starved_after: timedelta = timedelta(0)  # a queue starved this long -> warning; 0: off
    group_clusters: int = 0  # one incident for an alert on this many clusters or more; 0: off
    gpu_nodes: bool = (
        False  # a warning per GPU node that lost GPUs, is not Ready or reports a fault
    )
    stall_after: timedelta = timedelta(minutes=5)  # a Ready shard scheduler stopped; 0: off


@dataclass(frozen=True)
class NoticeSettings:
    evictions: bool = False  # post KAI's evictions to the evicted group's namespace channel
    channels: Mapping[str, str] = field(default_factory=dict)  # namespace (or "*") -> channel ID

    def channel_for(self, namespace: str, alert_channel: str) -> str:
        """Where a notice about `namespace` goes: its own channel, else "*", else the alerts'."""
        return self.channels.get(namespace) or self.channels.get("*") or alert_channel


@dataclass(frozen=True)
class PagerDutySettings:
    """Incidents of these severities also page PagerDuty (Events API v2); the integration key
    and the API's address come from the environment (`PAGERDUTY_ROUTING_KEY`,
    `PAGERDUTY_API_URL`)."""

    severities: tuple[str, ...] = ("critical",)


@dataclass(frozen=True)
class AlertmanagerSettings:
    """Alertmanager's alerts in the incident threads (docs/alertmanager.md): `url` is its API v2
    (where Silence creates and Unsilence expires silences), `channel` where its groups' roots go
    ("": `slack.alert_channel`)."""

    url: str
    channel: str = ""


@dataclass(frozen=True)
class ChangeSettings:
    remind_after: timedelta = timedelta(hours=24)  # an endless pause this old -> reminder; 0: off


# The ConfigMaps of their own beside the alert state's, `<state.configmap>-<suffix>`: the replay
# memory, the change journal, the approvals. Each cluster's alert state is
# `<state.configmap>-<cluster>` (`bot.state.names`), so no cluster may be called so.
STATE_SUFFIXES = ("once", "changes", "approvals")


@dataclass(frozen=True)
class StateSettings:
    backend: Literal["sqlite", "configmap"] = "sqlite"
    path: str = "./kai-chatops-state.sqlite"
    configmap: str = "kai-chatops-state"
    namespace: str = "kai-chatops"  # the ConfigMaps' namespace, in the first cluster


@dataclass(frozen=True)
class LeaseSettings:
    """With several replicas only the holder of this Lease (in the first cluster) runs checks."""

    enabled: bool | None = None  # None (`auto`): on exactly when the state is a shared ConfigMap
    namespace: str = "kai-chatops"
    name: str = "kai-chatops-alerts"
    duration: timedelta = timedelta(seconds=15)


@dataclass(frozen=True)
class GitopsShortcut:
    """The GitOps object `/kai reconcile kai|keda` acts on."""

    kind: str  # HelmRelease, Kustomization or Application
    namespace: str
    name: str


@dataclass(frozen=True)
class GitopsSettings:
    kai: GitopsShortcut | None = None  # None: the shortcut is not configured
    keda: GitopsShortcut | None = None
    reconcile_timeout: timedelta = timedelta(minutes=5)

    def shortcut(self, target: str) -> GitopsShortcut | None:
        """The object configured for `kai` or `keda`, or None."""
        return self.kai if target == "kai" else self.keda if target == "keda" else None


@dataclass(frozen=True)
class KubernetesSettings:
    request_timeout: timedelta = timedelta(seconds=10)
    retries: int = 3  # retries of 429, 5xx and connection errors
    threads: int = 32  # the client's threads, shared by every cluster


@dataclass(frozen=True)
class Settings:
    clusters: tuple[ClusterSettings, ...]
    slack: SlackSettings = field(default_factory=SlackSettings)
    access: AccessSettings = field(default_factory=AccessSettings)
    kai: KaiSettings = field(default_factory=KaiSettings)
    keda: KedaSettings = field(default_factory=KedaSettings)
    alerts: AlertSettings = field(default_factory=AlertSettings)
    state: StateSettings = field(default_factory=StateSettings)
    lease: LeaseSettings = field(default_factory=LeaseSettings)
    kubernetes: KubernetesSettings = field(default_factory=KubernetesSettings)
    gitops: GitopsSettings = field(default_factory=GitopsSettings)
    notices: NoticeSettings = field(default_factory=NoticeSettings)
    changes: ChangeSettings = field(default_factory=ChangeSettings)
    alertmanager: AlertmanagerSettings | None = None  # None: no webhook, no silences
    pagerduty: PagerDutySettings | None = None  # None: PagerDuty is not paged

    def cluster(self, name: str | None) -> ClusterSettings:
        """The cluster called `name`, or the first one for None.

        Raises:
            UserError: no cluster has that name.
        """
        if name is None:
            return self.clusters[0]
        for cluster in self.clusters:
            if cluster.name == name:
                return cluster
        configured = ", ".join(c.name for c in self.clusters)
        raise errors.UserError(f"unknown cluster {name!r}; configured: {configured}")
