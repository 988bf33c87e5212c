"""The configuration file's content (docs/design.md §1.4): values, defaults, and every problem
reported."""

from __future__ import annotations

import copy
import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import settings as config
from bot.core import errors

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.yaml"
DELETE = object()

FULL: dict[str, Any] = {
    "clusters": [
        {"name": "prod", "kubeconfig": "/etc/kai/kubeconfig", "context": "prod-admin"},
        {"name": "staging"},
    ],
    "slack": {"command": "/gpu", "alert_channel": "C0123456789"},
    "access": {"operators": ["U0123ABCD", "W0123ABCD", "S0123ABCD", "@platform-oncall"]},
    "kai": {"namespace": "kai", "progressing_timeout": "15m"},
    "keda": {"namespaces": ["annia", "training"], "apiservice": "v1beta1.custom.metrics.io"},
    "alerts": {"interval": "10s", "hold": "2m", "repeat": "1h30m"},
    "state": {"backend": "configmap", "path": "/data/state.sqlite", "configmap": "chatops"},
    "kubernetes": {"request_timeout": "5s", "retries": 5, "threads": 8},
}
MINIMAL: dict[str, Any] = {
    "clusters": [{"name": "prod"}],
    "slack": {"alert_channel": "C0123456789"},
}


def changed(path: str, value: object, base: dict[str, Any] = FULL) -> dict[str, Any]:
    """A copy of `base` with the value at dotted `path` (list indexes as numbers) replaced."""
    raw = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = raw
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if value is DELETE:
        del node[last]
    else:
        node[int(last) if isinstance(node, list) else last] = value
    return raw


def problems_of(raw: object) -> list[str]:
    with pytest.raises(errors.ConfigError) as caught:
        config.parse_settings(raw)
    return caught.value.problems


def test_a_full_configuration_is_read_with_every_value() -> None:
    settings = config.parse_settings(FULL)

    assert settings.clusters == (
        config.ClusterSettings("prod", "/etc/kai/kubeconfig", "prod-admin"),
        config.ClusterSettings("staging", None, None),
    )
    assert settings.slack == config.SlackSettings(command="/gpu", alert_channel="C0123456789")
    assert settings.access.operators == ("U0123ABCD", "W0123ABCD", "S0123ABCD", "@platform-oncall")
    assert settings.kai == config.KaiSettings("kai", timedelta(minutes=15))
    assert settings.keda == config.KedaSettings(("annia", "training"), "v1beta1.custom.metrics.io")
    assert settings.alerts == config.AlertSettings(
        timedelta(seconds=10), timedelta(minutes=2), timedelta(hours=1, minutes=30)
    )
    assert settings.state == config.StateSettings("configmap", "/data/state.sqlite", "chatops")
    assert settings.kubernetes == config.KubernetesSettings(timedelta(seconds=5), 5, threads=8)


def test_a_minimal_configuration_gets_the_documented_defaults() -> None:
    settings = config.parse_settings(MINIMAL)

    assert settings.slack.command == "/kai"
    assert settings.access == config.AccessSettings(operators=(), viewers=None)
    assert settings.kai == config.KaiSettings("kai-scheduler", timedelta(minutes=10))
    assert settings.keda == config.KedaSettings((), "v1beta1.external.metrics.k8s.io")
    assert settings.alerts == config.AlertSettings(
        timedelta(seconds=30), timedelta(seconds=60), timedelta(hours=4)
    )
    assert settings.state == config.StateSettings(
        "sqlite", "./kai-chatops-state.sqlite", "kai-chatops-state"
    )
    assert settings.kubernetes == config.KubernetesSettings(timedelta(seconds=10), 3)


def test_a_key_left_empty_keeps_its_default() -> None:
    settings = config.parse_settings(changed("alerts", {"interval": None, "hold": "5s"}))

    assert settings.alerts.interval == timedelta(seconds=30)
    assert settings.alerts.hold == timedelta(seconds=5)


def test_a_cluster_without_kubeconfig_and_context_is_in_cluster() -> None:
    settings = config.parse_settings(MINIMAL)

    assert settings.clusters[0].in_cluster


def test_a_context_alone_uses_the_default_kubeconfig() -> None:
    cluster = config.parse_settings(
        changed("clusters.0", {"name": "prod", "context": "x"})
    ).clusters[0]

    assert (cluster.kubeconfig, cluster.context, cluster.in_cluster) == (None, "x", False)


def test_a_kubeconfig_under_home_is_expanded_without_reading_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", "/home/oncall")
    settings = config.parse_settings(changed("clusters.0.kubeconfig", "~/.kube/missing"))

    assert settings.clusters[0].kubeconfig == "/home/oncall/.kube/missing"


@pytest.mark.parametrize(
    ("viewers", "expected"),
    [("everyone", None), (["U0123ABCD", "@sre"], ("U0123ABCD", "@sre")), ([], ())],
    ids=["everyone", "a-list", "nobody"],
)
def test_viewers_are_everyone_or_a_list(viewers: object, expected: object) -> None:
    settings = config.parse_settings(changed("access.viewers", viewers))

    assert settings.access.viewers == expected


def test_no_cluster_name_picks_the_first_cluster() -> None:
    assert config.parse_settings(FULL).cluster(None).name == "prod"


def test_a_cluster_is_found_by_its_name() -> None:
    assert config.parse_settings(FULL).cluster("staging").name == "staging"


def test_an_unknown_cluster_name_is_refused_naming_the_configured_ones() -> None:
    with pytest.raises(errors.UserError) as caught:
        config.parse_settings(FULL).cluster("dev")

    assert str(caught.value) == "unknown cluster 'dev'; configured: prod, staging"


DURATION = "(expected a duration like 30s, 5m, 2h or 1h30m)"
NAME = "lowercase letters, digits and '-'"
PRINCIPAL = "a user ID like U0123ABCD, a user-group ID like S0123ABCD or '@a-group'"
PROBLEMS = [
    ("alerts.interval", "5 minutes", f"alerts.interval: '5 minutes' is not a duration {DURATION}"),
    ("alerts.interval", "0s", f"alerts.interval: '0s' is not a duration {DURATION}"),
    ("alerts.hold", 60, f"alerts.hold: 60 is not a duration {DURATION}"),
    ("alerts.repeat", "-4h", f"alerts.repeat: '-4h' is not a duration {DURATION}"),
    (
        "kai.progressing_timeout",
        "10 min",
        f"kai.progressing_timeout: '10 min' is not a duration {DURATION}",
    ),
    (
        "kubernetes.request_timeout",
        "1.5s",
        f"kubernetes.request_timeout: '1.5s' is not a duration {DURATION}",
    ),
    (
        "clusters.1.name",
        "prod",
        "clusters[1].name: 'prod' is used twice (cluster names must be unique)",
    ),
    ("clusters.1.name", DELETE, "clusters[1].name: required (expected a short name like prod)"),
    (
        "clusters.0.name",
        "Prod EU",
        f"clusters[0].name: 'Prod EU' is not a cluster name (expected {NAME}, like prod)",
    ),
    (
        "clusters.0.kubeconfig",
        "",
        "clusters[0].kubeconfig: '' is not a path (expected a path like ~/.kube/config)",
    ),
    (
        "clusters.0.context",
        7,
        "clusters[0].context: 7 is not a context name "
        "(expected a context name from the kubeconfig)",
    ),
    (
        "clusters.0.kubecontext",
        "prod",
        "clusters[0]: unknown key 'kubecontext' (known keys: name, kubeconfig, context)",
    ),
    (
        "clusters.1",
        "staging",
        "clusters[1]: 'staging' is not a mapping (expected keys: name, kubeconfig, context)",
    ),
    (
        "clusters",
        DELETE,
        "clusters: required (expected a list of one or more clusters with names)",
    ),
    ("clusters", [], "clusters: required (expected a list of one or more clusters with names)"),
    (
        "clusters",
        {"name": "prod"},
        'clusters: {"name": "prod"} is not a list '
        "(expected a list of one or more clusters with names)",
    ),
    ("slack.command", "kai", "slack.command: 'kai' must start with '/'"),
    (
        "slack.command",
        "/Kai ops",
        "slack.command: '/Kai ops' is not a slash command "
        f"(expected '/' then {NAME} or '_', like /kai)",
    ),
    (
        "slack.alert_channel",
        DELETE,
        "slack.alert_channel: required (expected the channel ID for alert posts)",
    ),
    (
        "slack.alert_channel",
        "",
        "slack.alert_channel: '' is not a channel ID (expected an ID like C0123456789)",
    ),
    (
        "slack.alert_channel",
        "#gpu-alerts",
        "slack.alert_channel: '#gpu-alerts' is not a channel ID (expected an ID like C0123456789)",
    ),
    (
        "slack.alert_channel",
        ["C0123456789"],
        'slack.alert_channel: ["C0123456789"] is not a channel ID '
        "(expected an ID like C0123456789)",
    ),
    (
        "slack.comand",
        "/kai",
        "slack: unknown key 'comand' (known keys: command, alert_channel)",
    ),
    (
        "slack",
        "/kai",
        "slack: '/kai' is not a mapping (expected keys: command, alert_channel)",
    ),
    (
        "access.operators",
        ["U0123ABCD", "alice"],
        f"access.operators[1]: 'alice' is not a user or user group (expected {PRINCIPAL})",
    ),
    (
        "access.operators",
        "@platform-oncall",
        "access.operators: '@platform-oncall' is not a list (expected a list like [a, b])",
    ),
    (
        "access.viewers",
        "all",
        "access.viewers: 'all' is not everyone or a list (expected either, like operators)",
    ),
    (
        "access.viewers",
        ["#general"],
        f"access.viewers[0]: '#general' is not a user or user group (expected {PRINCIPAL})",
    ),
    (
        "kai.namespace",
        "KAI",
        f"kai.namespace: 'KAI' is not a namespace (expected {NAME}, like annia)",
    ),
    (
        "keda.namespaces",
        ["annia", "Team_A"],
        f"keda.namespaces[1]: 'Team_A' is not a namespace (expected {NAME}, like annia)",
    ),
    (
        "keda.namespaces",
        "annia",
        "keda.namespaces: 'annia' is not a list (expected a list like [a, b])",
    ),
    (
        "keda.apiservice",
        "External Metrics",
        "keda.apiservice: 'External Metrics' is not an object name "
        "(expected lowercase letters, digits, '-' and '.')",
    ),
    (
        "state.backend",
        "redis",
        "state.backend: 'redis' is not a backend (expected sqlite or configmap)",
    ),
    ("state.path", " ", "state.path: ' ' is not a path (expected a file path)"),
    (
        "state.configmap",
        "Chat Ops",
        "state.configmap: 'Chat Ops' is not an object name "
        "(expected lowercase letters, digits, '-' and '.')",
    ),
    *[
        (
            "kubernetes.retries",
            value,
            f"kubernetes.retries: {shown} is not a retry count (expected a whole number, 0 to 10)",
        )
        for value, shown in [(-1, "-1"), (11, "11"), (True, "true"), ("3", "'3'"), (2.5, "2.5")]
    ],
    *[
        (
            "kubernetes.threads",
            value,
            f"kubernetes.threads: {shown} is not a thread count (expected a whole number, 4 to 64)",
        )
        for value, shown in [(3, "3"), (65, "65"), (200, "200"), ("16", "'16'")]
    ],
    (
        "access.impersonate",
        "yes",
        "access.impersonate: 'yes' is not an impersonation mode (expected none, email or id)",
    ),
    (
        "access.approval",
        {"clusters": ["prod", "dev"], "approvers": ["@platform-leads"]},
        "access.approval.clusters: 'dev' is not a configured cluster (prod, staging)",
    ),
    (
        "access.approval",
        {"clusters": ["prod"]},
        "access.approval.approvers: required (expected a list of users or user groups, "
        "like ['@platform-leads'])",
    ),
    (
        "access.approval",
        {"clusters": ["prod"], "approvers": ["platform-leads"]},
        "access.approval.approvers[0]: 'platform-leads' is not a user or user group (expected "
        "a user ID like U0123ABCD, a user-group ID like S0123ABCD or '@a-group')",
    ),
    (
        "alerts.starved_after",
        "soon",
        "alerts.starved_after: 'soon' is not a duration (expected a duration like 30s, 5m, 2h "
        "or 1h30m)",
    ),
    (
        "alerts.group_clusters",
        1,
        "alerts.group_clusters: 1 is not a cluster count (expected 0 for off, or 2 to 1000)",
    ),
    (
        "alerts.gpu_nodes",
        "on",
        "alerts.gpu_nodes: 'on' is not true or false (expected one of them)",
    ),
    (
        "alerts.stall_after",
        "10s",
        "alerts.stall_after: '10s' is shorter than a KAI scheduler's Lease (15s), which it renews "
        "every few seconds (expected 0 for off, or 15s or more, like 5m)",
    ),
    (
        "alerts.stall_after",
        "soon",
        "alerts.stall_after: 'soon' is not a duration (expected a duration like 30s, 5m, 2h "
        "or 1h30m)",
    ),
    (
        "notices.evictions",
        "yes",
        "notices.evictions: 'yes' is not true or false (expected one of them)",
    ),
    (
        "notices.channels",
        {"team-a": "#team-a"},
        "notices.channels['team-a']: '#team-a' is not a channel ID (expected an ID like "
        "C0123456789)",
    ),
    (
        "changes.remind_after",
        "daily",
        "changes.remind_after: 'daily' is not a duration (expected a duration like 30s, 5m, 2h "
        "or 1h30m)",
    ),
    (
        "alertmanager",
        {"channel": "C0ALERTS"},
        "alertmanager.url: required (expected Alertmanager's URL, like "
        "http://alertmanager.monitoring.svc:9093)",
    ),
    (
        "alertmanager",
        {"url": "alertmanager:9093"},
        "alertmanager.url: 'alertmanager:9093' is not an http(s) URL (expected a URL like "
        "http://host:9093)",
    ),
    (
        "alertmanager",
        {"url": "http://am:9093", "channel": "#alerts"},
        "alertmanager.channel: '#alerts' is not a channel ID (expected an ID like C0123456789)",
    ),
    (
        "alertmanager",
        {"url": "http://am:9093", "token": "x"},
        "alertmanager.token: secrets come only from the environment (SLACK_BOT_TOKEN, "
        "SLACK_SIGNING_SECRET, SLACK_APP_TOKEN; cluster credentials via the kubeconfig); "
        "delete this key",
    ),
    (
        "alrts",
        {},
        "unknown key 'alrts' (known keys: clusters, slack, access, kai, keda, alerts, state, "
        "lease, kubernetes, gitops, notices, changes, alertmanager, pagerduty)",
    ),
    (
        "alerts.intervall",
        "30s",
        "alerts: unknown key 'intervall' (known keys: interval, hold, repeat, "
        "failures_before_alert, max_silence, mention, escalate_after, escalate_to, starved_after, "
        "group_clusters, gpu_nodes, stall_after)",
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    PROBLEMS,
    ids=[
        f"{path}={value!r}" if value is not DELETE else f"{path}-missing"
        for path, value, _ in PROBLEMS
    ],
)
def test_each_problem_names_the_key_the_value_and_what_is_expected(
    path: str, value: object, expected: str
) -> None:
    assert problems_of(changed(path, value)) == [expected]


SECRETS = [
    "slack.bot_token",
    "slack.signing_secret",
    "slack.app_token",
    "token",
    "clusters.0.token",
]


@pytest.mark.parametrize("path", SECRETS)
def test_a_secret_in_the_file_is_refused_pointing_to_the_environment(path: str) -> None:
    problems = problems_of(changed(path, "xoxb-very-secret"))

    assert len(problems) == 1
    assert problems[0].startswith(path.replace(".0.", "[0].") + ": secrets come only from")
    assert "SLACK_BOT_TOKEN" in problems[0]
    assert "xoxb-very-secret" not in problems[0]


@pytest.mark.parametrize(
    "raw",
    [None, [], "clusters: prod", 42],
    ids=["empty", "a-list", "a-string", "a-number"],
)
def test_a_document_that_is_not_a_mapping_is_one_problem(raw: object) -> None:
    problems = problems_of(raw)

    assert len(problems) == 1
    assert "expected a mapping with the keys clusters, slack, access" in problems[0]


def test_every_problem_is_reported_at_once_each_on_its_own_line() -> None:
    raw = changed("alerts.interval", "5 minutes")
    raw = changed("clusters.1.name", "prod", raw)
    raw = changed("slack.command", "kai", raw)
    raw = changed("alrts", {}, raw)

    with pytest.raises(errors.ConfigError) as caught:
        config.parse_settings(raw)

    assert str(caught.value).splitlines() == caught.value.problems
    assert sorted(caught.value.problems) == sorted(
        [
            f"alerts.interval: '5 minutes' is not a duration {DURATION}",
            "clusters[1].name: 'prod' is used twice (cluster names must be unique)",
            "slack.command: 'kai' must start with '/'",
            "unknown key 'alrts' (known keys: clusters, slack, access, kai, keda, alerts, state, "
            "lease, kubernetes, gitops, notices, changes, alertmanager, pagerduty)",
        ]
    )


def test_the_example_configuration_loads_and_matches_the_design() -> None:
    settings = config.load_settings(str(EXAMPLE))

    assert settings.clusters[0].name == "prod"
    assert settings.clusters[0].context == "prod"
    assert settings.slack == config.SlackSettings("/kai", "C0123456789")
    assert settings.access.operators == ("U0123ABCD", "@platform-oncall")
    assert settings.access.viewers is None
    assert settings.keda.namespaces == ("annia",)
    assert settings.alerts.mention == ("@platform-oncall",)
    assert settings.alerts.escalate_after == timedelta(minutes=15)
    assert settings.alerts.escalate_to == ("@platform-leads",)


@pytest.mark.parametrize(
    ("alerts", "problems"),
    [
        ({"mention": ["U0ONCALL", "S0GROUP", "@platform-oncall"]}, []),
        ({"mention": ["platform-oncall"]},
         ["alerts.mention[0]: 'platform-oncall' is not a user or user group (expected a user ID "
          "like U0123ABCD, a user-group ID like S0123ABCD or '@a-group')"]),
        ({"mention": "@platform-oncall"},
         ["alerts.mention: '@platform-oncall' is not a list (expected a list like [a, b])"]),
        ({"escalate_after": "15m", "escalate_to": ["@leads"]}, []),
        ({"escalate_after": "15m"},
         ['alerts.escalate_to: required with escalate_after (expected who to mention, like '
          '["@platform-leads"])']),
        ({"escalate_to": ["@leads"]},
         ["alerts.escalate_after: required with escalate_to (expected a duration like 15m)"]),
        ({"escalate_after": "15m", "escalate_to": []},
         ["alerts.escalate_to: [] mentions nobody (expected one or more users or groups)"]),
        ({"escalate_after": "soon", "escalate_to": ["@leads"]},
         ["alerts.escalate_after: 'soon' is not a duration (expected a duration like 30s, 5m, "
          "2h or 1h30m)"]),
    ],
    ids=["ids and handles", "a bare name", "not a list", "escalation", "no one to escalate to",
         "no time to escalate after", "escalate to nobody", "a bad duration"],
)  # fmt: skip
def test_paging_and_escalation_keys_are_checked(
    alerts: dict[str, object], problems: list[str]
) -> None:
    raw = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0123"}, "alerts": alerts}
    if not problems:
        assert config.parse_settings(raw).alerts.mention == tuple(alerts.get("mention", []))
        return
    with pytest.raises(errors.ConfigError) as raised:
        config.parse_settings(raw)
    assert raised.value.problems == problems


def test_the_example_configuration_writes_out_every_key_the_service_knows() -> None:
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    sections = {
        "slack": config.SlackSettings,
        "access": config.AccessSettings,
        "kai": config.KaiSettings,
        "keda": config.KedaSettings,
        "alerts": config.AlertSettings,
        "state": config.StateSettings,
        "lease": config.LeaseSettings,
        "kubernetes": config.KubernetesSettings,
        "gitops": config.GitopsSettings,
        "notices": config.NoticeSettings,
        "changes": config.ChangeSettings,
        "alertmanager": config.AlertmanagerSettings,
        "pagerduty": config.PagerDutySettings,
    }

    assert set(raw) == {"clusters", *sections}
    assert set(raw["access"]["approval"]) == {"clusters", "approvers"}
    assert set(raw["clusters"][0]) == {f.name for f in dataclasses.fields(config.ClusterSettings)}
    for name, cls in sections.items():
        assert set(raw[name]) == {f.name for f in dataclasses.fields(cls)}, name


def test_a_kubernetes_request_timeout_over_a_minute_is_refused() -> None:
    raw = {
        "clusters": [{"name": "prod"}],
        "slack": {"alert_channel": "C0123"},
        "kubernetes": {"request_timeout": "10m"},
    }
    with pytest.raises(errors.ConfigError) as raised:
        config.parse_settings(raw)
    assert raised.value.problems == [
        "kubernetes.request_timeout: '10m' is too long (expected at most 60s per API call)"
    ]


def test_the_new_keys_read_their_values_and_default_to_off() -> None:
    raw = changed("access.impersonate", "email")
    raw = changed("access.approval", {"clusters": ["prod"], "approvers": ["@leads"]}, raw)
    raw = changed("alerts.starved_after", "30m", raw)
    raw = changed("alerts.group_clusters", 3, raw)
    raw = changed("alerts.gpu_nodes", True, raw)
    raw = changed(
        "notices", {"evictions": True, "channels": {"*": "C0DEFAULT", "team-a": "C0A"}}, raw
    )
    raw = changed("changes", {"remind_after": "0"}, raw)

    read = config.parse_settings(raw)
    default = config.parse_settings(MINIMAL)

    assert read.access.impersonate == "email"
    assert read.access.approval == config.ApprovalSettings(("prod",), ("@leads",))
    assert (read.alerts.starved_after, read.alerts.group_clusters) == (timedelta(minutes=30), 3)
    assert read.alerts.gpu_nodes is True and default.alerts.gpu_nodes is False
    assert read.notices.evictions is True
    assert read.notices.channel_for("team-a", "C0ALERTS") == "C0A"
    assert read.notices.channel_for("team-b", "C0ALERTS") == "C0DEFAULT"
    assert read.changes.remind_after == timedelta(0)
    assert (default.access.impersonate, default.access.approval) == ("none", None)
    assert (default.alerts.starved_after, default.alerts.group_clusters) == (timedelta(0), 0)
    assert default.notices.evictions is False
    assert default.notices.channel_for("team-b", "C0ALERTS") == "C0ALERTS"
    assert default.changes.remind_after == timedelta(hours=24)


@pytest.mark.parametrize(
    ("value", "read"),
    [("0", timedelta(0)), ("15s", timedelta(seconds=15)), ("10m", timedelta(minutes=10))],
    ids=["off", "the-lease-duration", "longer"],
)
def test_stall_after_reads_off_or_the_lease_duration_and_up_and_defaults_to_five_minutes(
    value: str, read: timedelta
) -> None:
    assert config.parse_settings(changed("alerts.stall_after", value)).alerts.stall_after == read
    assert config.parse_settings(MINIMAL).alerts.stall_after == timedelta(minutes=5)


def test_alertmanager_is_off_unless_configured_and_its_url_kept_without_a_trailing_slash() -> None:
    assert config.parse_settings(MINIMAL).alertmanager is None
    raw = {**MINIMAL, "alertmanager": {"url": "http://alertmanager.monitoring.svc:9093/"}}
    settings = config.parse_settings(raw).alertmanager
    assert settings is not None
    assert (settings.url, settings.channel) == ("http://alertmanager.monitoring.svc:9093", "")
