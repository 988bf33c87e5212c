"""Settings: the YAML file of docs/design.md §1.4 read into frozen dataclasses.

`parse_settings` is pure and reports every problem at once, one line each; `load_settings` only
reads the file. Secrets never come from here: the composition root reads them from the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Literal, TypeVar

import yaml

from bot.config import values as cv
from bot.core import errors

T = TypeVar("T")


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


@dataclass(frozen=True)
class NoticeSettings:
    evictions: bool = False  # post KAI's evictions to the evicted group's namespace channel
    channels: Mapping[str, str] = field(default_factory=dict)  # namespace (or "*") -> channel ID

    def channel_for(self, namespace: str, alert_channel: str) -> str:
        """Where a notice about `namespace` goes: its own channel, else "*", else the alerts'."""
        return self.channels.get(namespace) or self.channels.get("*") or alert_channel


@dataclass(frozen=True)
class ChangeSettings:
    remind_after: timedelta = timedelta(hours=24)  # an endless pause this old -> reminder; 0: off


@dataclass(frozen=True)
class StateSettings:
    backend: Literal["sqlite", "configmap"] = "sqlite"
    path: str = "./kai-chatops-state.sqlite"
    configmap: str = "kai-chatops-state"
    namespace: str = "kai-chatops"  # the ConfigMap's namespace, in the first cluster


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


Convert = Callable[[object], Any]

_TOP_KEYS = (
    "clusters",
    "slack",
    "access",
    "kai",
    "keda",
    "alerts",
    "state",
    "lease",
    "kubernetes",
    "gitops",
    "notices",
    "changes",
)
_SECRETS = "secrets come only from the environment (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, "
_SECRETS += "SLACK_APP_TOKEN; cluster credentials via the kubeconfig); delete this key"
_LIST_ITEM = re.compile(r"\[[^\]]+\]: ")  # how a list's problem line names the bad item


def parse_settings(raw: object) -> Settings:
    """Read the parsed YAML document into `Settings`; pure.

    Raises:
        ConfigError: one line per problem (key path, value, what is expected), all of them.
    """
    if not isinstance(raw, Mapping):
        got = "the file is empty" if raw is None else f"the file holds {cv.show(raw)}"
        keys = ", ".join(_TOP_KEYS)
        raise errors.ConfigError([f"{got} (expected a mapping with the keys {keys})"])
    problems: list[str] = []
    top = _read_values(problems, raw, "", dict.fromkeys(_TOP_KEYS, lambda v: v))
    clusters = _read_clusters(problems, top.get("clusters"))
    sections = {
        name: cls(**_read_values(problems, top.get(name), name, converters))
        for name, (cls, converters) in _SECTIONS.items()
    }
    gitops = _read_gitops(problems, top.get("gitops"))
    approval = _read_approval(problems, _value(top.get("access"), "approval"), clusters)
    sections["access"] = replace(sections["access"], approval=approval)
    if _is_missing(top.get("slack"), "alert_channel"):
        problems.append("slack.alert_channel: required (expected the channel ID for alert posts)")
    problems += _escalation_problems(top.get("alerts"))
    if problems:
        raise errors.ConfigError(problems)
    return Settings(clusters=clusters, gitops=gitops, **sections)


def _escalation_problems(raw: object) -> list[str]:
    """`escalate_after` and `escalate_to` come together: one without the other would look like
    an escalation that never happens."""
    after, to = (not _is_missing(raw, key) for key in ("escalate_after", "escalate_to"))
    if after and not to:
        return [
            "alerts.escalate_to: required with escalate_after (expected who to mention, "
            'like ["@platform-leads"])'
        ]
    if to and not after:
        return ["alerts.escalate_after: required with escalate_to (expected a duration like 15m)"]
    if to and isinstance(raw, Mapping) and raw.get("escalate_to") == []:
        return ["alerts.escalate_to: [] mentions nobody (expected one or more users or groups)"]
    return []


def load_settings(path: str) -> Settings:
    """Read and parse the YAML file at `path`; reads that file, nothing else.

    Raises:
        ConfigError: the file is missing, unreadable or not YAML (one line), or its content is
            invalid (one line per problem). A key written twice in one mapping is refused.
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise errors.ConfigError(
            [f"{path}: no such file (start from config.example.yaml)"]
        ) from None
    except OSError as e:
        raise errors.ConfigError([f"{path}: cannot read it: {e.strerror or e}"]) from None
    try:
        raw = _load_yaml(data)
    except yaml.YAMLError as e:
        raise errors.ConfigError([f"{path}: not valid YAML: {_describe_yaml_error(e)}"]) from None
    except RecursionError:
        raise errors.ConfigError([f"{path}: not valid YAML: nested too deeply"]) from None
    except ValueError as e:  # a number of more than 4300 digits: Python's int limit
        raise errors.ConfigError([f"{path}: not valid YAML: {str(e).split(';')[0]}"]) from None
    return parse_settings(raw)


def _read_values(
    problems: list[str], raw: object, path: str, converters: Mapping[str, Convert]
) -> dict[str, Any]:
    """The converted values of the keys present in mapping `raw`; anything else is a problem."""
    known = ", ".join(converters)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(_at(path, f"{cv.show(raw)} is not a mapping (expected keys: {known})"))
        return {}
    values = {}
    for key, value in raw.items():
        key_path = f"{path}.{key}" if path else str(key)
        if _is_secret(key):
            problems.append(_at(key_path, _SECRETS))  # never repeat a secret's value
        elif key not in converters:
            problems.append(_at(path, f"unknown key {str(key)!r} (known keys: {known})"))
        elif value is not None:  # `key:` with nothing after it keeps the default
            try:
                values[key] = converters[key](value)
            except ValueError as e:
                problems.extend(_at(key_path, line) for line in str(e).splitlines())
    return values


def _read_clusters(problems: list[str], raw: object) -> tuple[ClusterSettings, ...]:
    if not isinstance(raw, list) or not raw:
        got = "required" if raw is None or raw == [] else f"{cv.show(raw)} is not a list"
        problems.append(f"clusters: {got} (expected a list of one or more clusters with names)")
        return ()
    clusters: list[ClusterSettings] = []
    for index, entry in enumerate(raw):
        path = f"clusters[{index}]"
        values = _read_values(problems, entry, path, _CLUSTER_KEYS)
        cluster = ClusterSettings(values.pop("name", ""), **values)
        if _is_missing(entry, "name"):
            problems.append(f"{path}.name: required (expected a short name like prod)")
        elif cluster.name and any(c.name == cluster.name for c in clusters):
            problems.append(
                f"{path}.name: {cluster.name!r} is used twice (cluster names must be unique)"
            )
        clusters.append(cluster)
    return tuple(clusters)


def _read_gitops(problems: list[str], raw: object) -> GitopsSettings:
    """The `gitops` section; each shortcut is a mapping checked key by key (`gitops.kai.kind`)."""
    keys: dict[str, Convert] = {
        "kai": cv.as_is,
        "keda": cv.as_is,
        "reconcile_timeout": cv.reconcile_wait,
    }
    values = _read_values(problems, raw, "gitops", keys)
    for target in ("kai", "keda"):
        if target in values:
            values[target] = _read_shortcut(problems, values[target], f"gitops.{target}")
    return GitopsSettings(**values)


def _read_approval(
    problems: list[str], raw: object, clusters: tuple[ClusterSettings, ...]
) -> ApprovalSettings | None:
    """`access.approval`, its clusters checked against the configured ones; None when absent."""
    if raw is None:
        return None
    path = "access.approval"
    values = _read_values(problems, raw, path, _APPROVAL_KEYS)
    missing = [key for key in _APPROVAL_KEYS if _value(raw, key) in (None, [])]
    problems.extend(f"{path}.{key}: required (expected {_APPROVAL_HINTS[key]})" for key in missing)
    known = [cluster.name for cluster in clusters]
    for name in values.get("clusters", ()):
        if known and name not in known:
            names = ", ".join(known)
            problems.append(f"{path}.clusters: {name!r} is not a configured cluster ({names})")
    if len(values) < len(_APPROVAL_KEYS) or missing:
        return None
    return ApprovalSettings(values["clusters"], values["approvers"])


def _read_shortcut(problems: list[str], raw: object, path: str) -> GitopsShortcut | None:
    values = _read_values(problems, raw, path, _SHORTCUT_KEYS)
    missing = [key for key in _SHORTCUT_KEYS if _is_missing(raw, key)]
    problems.extend(
        f"{path}.{key}: required (expected {cv.SHORTCUT_HINTS[key]})" for key in missing
    )
    if "kind" not in values or "name" not in values:
        return None
    namespace, name = values["name"]
    return GitopsShortcut(values["kind"], namespace, name)


def _at(path: str, message: str) -> str:
    """A problem line: the key path, then what is wrong ("[i]: …" from a list goes right after)."""
    if not path:
        return message
    return f"{path}{message}" if _LIST_ITEM.match(message) else f"{path}: {message}"


def _value(raw: object, key: str) -> object:
    """`raw[key]` when `raw` is a mapping, else None."""
    return raw.get(key) if isinstance(raw, Mapping) else None


def _is_missing(raw: object, key: str) -> bool:
    """True when `raw` is absent or a mapping without a value for `key`."""
    return raw is None or (isinstance(raw, Mapping) and raw.get(key) is None)


def _is_secret(key: object) -> bool:
    return str(key).lower().replace("-", "_").endswith(("token", "secret", "password"))


def _describe_yaml_error(e: yaml.YAMLError) -> str:
    if isinstance(e, yaml.MarkedYAMLError) and e.problem_mark is not None:
        mark = e.problem_mark
        return f"{e.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(e).split())


def _load_yaml(data: bytes) -> Any:
    """The file's data with libyaml's parser when PyYAML has it (a fleet's config of a thousand
    clusters parses in milliseconds, not a third of a second); a file it refuses is parsed
    again by PyYAML's own parser, whose messages (and line and column) are the ones we show.

    Raises:
        yaml.YAMLError, RecursionError, ValueError: as `yaml.load`.
    """
    try:
        return yaml.load(data, Loader=_FastUniqueKeyLoader)  # safe loaders: plain data only
    except yaml.YAMLError:
        return yaml.load(data, Loader=_UniqueKeyLoader)


class _UniqueKeys:
    """yaml.safe_load, except that a key given twice is an error, not silently the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value in seen:
                problem = f"found key {key_node.value!r} twice (the second would replace the first)"
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen.add(key_node.value if isinstance(key_node, yaml.ScalarNode) else None)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc, no-any-return]


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    pass


class _FastUniqueKeyLoader(_UniqueKeys, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    pass


_CLUSTER_KEYS: dict[str, Convert] = {
    "name": cv.matching(cv.LABEL, "a cluster name", f"{cv.NAME}, like prod"),
    "kubeconfig": cv.matching(cv.TEXT, "a path", "a path like ~/.kube/config", os.path.expanduser),
    "context": cv.matching(cv.TEXT, "a context name", "a context name from the kubeconfig"),
}
_SECTIONS: dict[str, tuple[type[Any], dict[str, Convert]]] = {
    "slack": (SlackSettings, {"command": cv.command, "alert_channel": cv.channel}),
    "access": (
        AccessSettings,
        {
            "operators": cv.principals,
            "viewers": cv.viewers,
            "impersonate": cv.impersonation,
            "approval": lambda _: None,  # a nested mapping: _read_approval reads it
        },
    ),
    "kai": (KaiSettings, {"namespace": cv.namespace, "progressing_timeout": cv.duration}),
    "keda": (
        KedaSettings,
        {"namespaces": cv.list_of(cv.namespace), "apiservice": cv.object_name},
    ),
    "alerts": (
        AlertSettings,
        {
            "interval": cv.duration,
            "hold": cv.hold,
            "repeat": cv.duration,
            "failures_before_alert": cv.failure_count,
            "max_silence": cv.duration,
            "mention": cv.principals,
            "escalate_after": cv.duration,
            "escalate_to": cv.principals,
            "starved_after": cv.duration_or_off,
            "group_clusters": cv.cluster_count,
        },
    ),
    "state": (
        StateSettings,
        {
            "backend": cv.backend,
            "path": cv.path,
            "configmap": cv.object_name,
            "namespace": cv.namespace,
        },
    ),
    "lease": (
        LeaseSettings,
        {
            "enabled": cv.auto_flag,
            "namespace": cv.namespace,
            "name": cv.object_name,
            "duration": cv.duration,
        },
    ),
    "notices": (NoticeSettings, {"evictions": cv.flag, "channels": cv.notice_channels}),
    "changes": (ChangeSettings, {"remind_after": cv.duration_or_off}),
    "kubernetes": (
        KubernetesSettings,
        {"request_timeout": cv.request_timeout, "retries": cv.retries, "threads": cv.threads},
    ),
}

_APPROVAL_KEYS: dict[str, Convert] = {
    "clusters": cv.list_of(cv.matching(cv.LABEL, "a cluster name", f"{cv.NAME}, like prod")),
    "approvers": cv.principals,
}
_APPROVAL_HINTS = {
    "clusters": "a list of cluster names, like [prod]",
    "approvers": "a list of users or user groups, like ['@platform-leads']",
}
_SHORTCUT_KEYS: dict[str, Convert] = {"kind": cv.shortcut_kind, "name": cv.namespaced_name}
