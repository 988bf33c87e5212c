"""The parsed YAML document read into `Settings` (docs/design.md §1.4): every key checked and
converted (`bot.config.values`), every problem reported at once, one line each.

Pure: the file itself is read by `bot.config.load`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from bot.config import model, values
from bot.core import errors

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
    "alertmanager",
    "pagerduty",
)
_SECRETS = "secrets come only from the environment (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, "
_SECRETS += "SLACK_APP_TOKEN; cluster credentials via the kubeconfig); delete this key"
_LIST_ITEM = re.compile(r"\[[^\]]+\]: ")  # how a list's problem line names the bad item


def parse_settings(raw: object) -> model.Settings:
    """Read the parsed YAML document into `Settings`; pure.

    Raises:
        ConfigError: one line per problem (key path, value, what is expected), all of them.
    """
    if not isinstance(raw, Mapping):
        got = "the file is empty" if raw is None else f"the file holds {values.show(raw)}"
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
    alertmanager = _read_alertmanager(problems, top.get("alertmanager"))
    approval = _read_approval(problems, _value(top.get("access"), "approval"), clusters)
    sections["access"] = replace(sections["access"], approval=approval)
    if _is_missing(top.get("slack"), "alert_channel"):
        problems.append("slack.alert_channel: required (expected the channel ID for alert posts)")
    problems += _escalation_problems(top.get("alerts"))
    problems += _state_problems(clusters, sections["state"])
    pagerduty = _read_pagerduty(problems, top.get("pagerduty"))
    if problems:
        raise errors.ConfigError(problems)
    return model.Settings(
        clusters=clusters, gitops=gitops, alertmanager=alertmanager, pagerduty=pagerduty, **sections
    )


def _read_pagerduty(problems: list[str], raw: object) -> model.PagerDutySettings | None:
    """`pagerduty` (None when absent). Its key and address are the environment's: a file
    that names them is told where they go instead of "unknown key"."""
    if raw is None:
        return None
    elsewhere = {"routing_key": "PAGERDUTY_ROUTING_KEY", "integration_key": "PAGERDUTY_ROUTING_KEY"}
    elsewhere |= {"api_url": "PAGERDUTY_API_URL", "url": "PAGERDUTY_API_URL"}
    if isinstance(raw, Mapping):
        for key in [k for k in raw if k in elsewhere]:
            problems.append(
                f"pagerduty.{key}: comes only from the environment ({elsewhere[key]}); "
                "delete this key"
            )
        raw = {k: v for k, v in raw.items() if k not in elsewhere}
    given = _read_values(problems, raw, "pagerduty", {"severities": values.severities})
    return model.PagerDutySettings(**given)


def _state_problems(
    clusters: tuple[model.ClusterSettings, ...], state: model.StateSettings
) -> list[str]:
    """On the configmap backend each cluster's alert state is `<state.configmap>-<cluster>`: a
    cluster named after a ConfigMap of the bot's own (`once`, `changes`, `approvals`) would
    share it, and a name past 253 characters is no name."""
    if state.backend != "configmap":
        return []
    problems = []
    for index, cluster in enumerate(clusters):
        document = f"{state.configmap}-{cluster.name}"
        if cluster.name in model.STATE_SUFFIXES:
            problems.append(
                f"clusters[{index}].name: {cluster.name!r} cannot be used with state.backend "
                f"configmap (its alert state would be the ConfigMap {document}, which keeps "
                f"the bot's {cluster.name}; expected a name other than "
                f"{', '.join(model.STATE_SUFFIXES)})"
            )
        elif len(document) > 253:
            problems.append(
                f"clusters[{index}].name: {cluster.name!r} with state.configmap "
                f"{state.configmap!r} makes a ConfigMap name longer than 253 characters "
                "(expected a shorter cluster name or state.configmap)"
            )
    return problems


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


def _read_values(
    problems: list[str], raw: object, path: str, converters: Mapping[str, Convert]
) -> dict[str, Any]:
    """The converted values of the keys present in mapping `raw`; anything else is a problem."""
    known = ", ".join(converters)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(_at(path, f"{values.show(raw)} is not a mapping (expected keys: {known})"))
        return {}
    given = {}
    for key, value in raw.items():
        key_path = f"{path}.{key}" if path else str(key)
        if _is_secret(key):
            problems.append(_at(key_path, _SECRETS))  # never repeat a secret's value
        elif key not in converters:
            problems.append(_at(path, f"unknown key {str(key)!r} (known keys: {known})"))
        elif value is not None:  # `key:` with nothing after it keeps the default
            try:
                given[key] = converters[key](value)
            except ValueError as e:
                problems.extend(_at(key_path, line) for line in str(e).splitlines())
    return given


def _read_clusters(problems: list[str], raw: object) -> tuple[model.ClusterSettings, ...]:
    if not isinstance(raw, list) or not raw:
        got = "required" if raw is None or raw == [] else f"{values.show(raw)} is not a list"
        problems.append(f"clusters: {got} (expected a list of one or more clusters with names)")
        return ()
    clusters: list[model.ClusterSettings] = []
    for index, entry in enumerate(raw):
        path = f"clusters[{index}]"
        given = _read_values(problems, entry, path, _CLUSTER_KEYS)
        cluster = model.ClusterSettings(given.pop("name", ""), **given)
        if _is_missing(entry, "name"):
            problems.append(f"{path}.name: required (expected a short name like prod)")
        elif cluster.name and any(c.name == cluster.name for c in clusters):
            problems.append(
                f"{path}.name: {cluster.name!r} is used twice (cluster names must be unique)"
            )
        clusters.append(cluster)
    return tuple(clusters)


def _read_gitops(problems: list[str], raw: object) -> model.GitopsSettings:
    """The `gitops` section; each shortcut is a mapping checked key by key (`gitops.kai.kind`)."""
    keys: dict[str, Convert] = {
        "kai": values.as_is,
        "keda": values.as_is,
        "reconcile_timeout": values.reconcile_wait,
    }
    given = _read_values(problems, raw, "gitops", keys)
    for target in ("kai", "keda"):
        if target in given:
            given[target] = _read_shortcut(problems, given[target], f"gitops.{target}")
    return model.GitopsSettings(**given)


def _read_alertmanager(problems: list[str], raw: object) -> model.AlertmanagerSettings | None:
    """The optional `alertmanager` section: None when absent (no webhook is served)."""
    if raw is None:
        return None
    keys: dict[str, Convert] = {"url": values.http_url, "channel": values.channel}
    given = _read_values(problems, raw, "alertmanager", keys)
    if _is_missing(raw, "url"):
        problems.append(
            "alertmanager.url: required (expected Alertmanager's URL, like "
            "http://alertmanager.monitoring.svc:9093)"
        )
    return model.AlertmanagerSettings(**given) if "url" in given else None


def _read_approval(
    problems: list[str], raw: object, clusters: tuple[model.ClusterSettings, ...]
) -> model.ApprovalSettings | None:
    """`access.approval`, its clusters checked against the configured ones; None when absent."""
    if raw is None:
        return None
    path = "access.approval"
    given = _read_values(problems, raw, path, _APPROVAL_KEYS)
    missing = [key for key in _APPROVAL_KEYS if _value(raw, key) in (None, [])]
    problems.extend(f"{path}.{key}: required (expected {_APPROVAL_HINTS[key]})" for key in missing)
    known = [cluster.name for cluster in clusters]
    for name in given.get("clusters", ()):
        if known and name not in known:
            names = ", ".join(known)
            problems.append(f"{path}.clusters: {name!r} is not a configured cluster ({names})")
    if len(given) < len(_APPROVAL_KEYS) or missing:
        return None
    return model.ApprovalSettings(given["clusters"], given["approvers"])


def _read_shortcut(problems: list[str], raw: object, path: str) -> model.GitopsShortcut | None:
    given = _read_values(problems, raw, path, _SHORTCUT_KEYS)
    missing = [key for key in _SHORTCUT_KEYS if _is_missing(raw, key)]
    problems.extend(
        f"{path}.{key}: required (expected {values.SHORTCUT_HINTS[key]})" for key in missing
    )
    if "kind" not in given or "name" not in given:
        return None
    namespace, name = given["name"]
    return model.GitopsShortcut(given["kind"], namespace, name)


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


_CLUSTER_KEYS: dict[str, Convert] = {
    "name": values.matching(values.LABEL, "a cluster name", f"{values.NAME}, like prod"),
    "kubeconfig": values.matching(
        values.TEXT, "a path", "a path like ~/.kube/config", os.path.expanduser
    ),
    "context": values.matching(values.TEXT, "a context name", "a context name from the kubeconfig"),
}
_SECTIONS: dict[str, tuple[type[Any], dict[str, Convert]]] = {
    "slack": (model.SlackSettings, {"command": values.command, "alert_channel": values.channel}),
    "access": (
        model.AccessSettings,
        {
            "operators": values.principals,
            "viewers": values.viewers,
            "impersonate": values.impersonation,
            "approval": lambda _: None,  # a nested mapping: _read_approval reads it
        },
    ),
    "kai": (
        model.KaiSettings,
        {"namespace": values.namespace, "progressing_timeout": values.duration},
    ),
    "keda": (
        model.KedaSettings,
        {"namespaces": values.list_of(values.namespace), "apiservice": values.object_name},
    ),
    "alerts": (
        model.AlertSettings,
        {
            "interval": values.duration,
            "hold": values.hold,
            "repeat": values.duration,
            "failures_before_alert": values.failure_count,
            "max_silence": values.duration,
            "mention": values.principals,
            "escalate_after": values.duration,
            "escalate_to": values.principals,
            "starved_after": values.duration_or_off,
            "group_clusters": values.cluster_count,
            "gpu_nodes": values.flag,
            "stall_after": values.stall_wait,
        },
    ),
    "state": (
        model.StateSettings,
        {
            "backend": values.backend,
            "path": values.path,
            "configmap": values.object_name,
            "namespace": values.namespace,
        },
    ),
    "lease": (
        model.LeaseSettings,
        {
            "enabled": values.auto_flag,
            "namespace": values.namespace,
            "name": values.object_name,
            "duration": values.duration,
        },
    ),
    "notices": (
        model.NoticeSettings,
        {"evictions": values.flag, "channels": values.notice_channels},
    ),
    "changes": (model.ChangeSettings, {"remind_after": values.duration_or_off}),
    "kubernetes": (
        model.KubernetesSettings,
        {
            "request_timeout": values.request_timeout,
            "retries": values.retries,
            "threads": values.threads,
        },
    ),
}

_APPROVAL_KEYS: dict[str, Convert] = {
    "clusters": values.list_of(
        values.matching(values.LABEL, "a cluster name", f"{values.NAME}, like prod")
    ),
    "approvers": values.principals,
}
_APPROVAL_HINTS = {
    "clusters": "a list of cluster names, like [prod]",
    "approvers": "a list of users or user groups, like ['@platform-leads']",
}
_SHORTCUT_KEYS: dict[str, Convert] = {"kind": values.shortcut_kind, "name": values.namespaced_name}
