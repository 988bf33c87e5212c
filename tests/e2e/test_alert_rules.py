"""Which cluster states raise which alerts, read from the simulator as a live check reads them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from health_snapshots import kai_snapshot, with_deployment, without_deployment
from objects import apiservice, deployment, kai_conditions, kai_config, shard

from bot.alerts import render as render_alerts
from bot.alerts import rules
from bot.alerts.model import AlertState, Observation, Severity
from bot.core.models import ClusterSnapshot, Health, HealthReport
from bot.health import report as health
from bot.health import usecase as usecases
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator, breakage

APISERVICE = "v1beta1.external.metrics.k8s.io"
TIMEOUT = timedelta(minutes=10)


pytestmark = pytest.mark.sim(scenarios=["default"])


async def observe(gateway: KubeGateway, now: datetime) -> list[Observation]:
    snapshot = await usecases.read_snapshot(gateway, "kai-scheduler", APISERVICE)
    report = health.build_report(
        snapshot, cluster="sim", now=now, progressing_timeout=TIMEOUT, apiservice_name=APISERVICE
    )
    return detect(snapshot, report, now)


def detect(snapshot: ClusterSnapshot, report: HealthReport, now: datetime) -> list[Observation]:
    return rules.detect(
        snapshot,
        report,
        now=now,
        progressing_timeout=TIMEOUT,
        apiservice_name=APISERVICE,
        command="/kai",
    )


async def test_a_healthy_cluster_raises_nothing(gateway: KubeGateway) -> None:
    assert await observe(gateway, datetime.now(UTC)) == []


@pytest.mark.parametrize(
    ("action", "severity", "kind", "condition", "words"),
    [
        ("dependencies_missing", Severity.CRITICAL, "Config", "DependenciesFulfilled",
         "KAI-prometheus is missing prometheus operator"),
        ("delete_kai_config", Severity.CRITICAL, "Config", "Missing", "kai-config"),
        ("apiservice_down", Severity.CRITICAL, "APIService", "Available",
         "keda-operator-metrics-apiserver"),
        ("apiservice_missing", Severity.CRITICAL, "APIService", "Missing", APISERVICE),
        ("operator_down", Severity.WARNING, "Deployment", "Available", "kai-operator"),
        ("scheduler_down", Severity.CRITICAL, "Deployment", "Available", "kai-scheduler-default"),
    ],
    ids=["dependencies-missing", "kai-config-missing", "apiservice-unavailable",
         "apiservice-missing", "operator-unavailable", "scheduler-unavailable"],
)  # fmt: skip
async def test_each_bad_state_raises_its_alert(
    sim: Simulator,
    gateway: KubeGateway,
    action: str,
    severity: Severity,
    kind: str,
    condition: str,
    words: str,
) -> None:
    breakage.ACTIONS[action](sim)
    observed = await observe(gateway, datetime.now(UTC))
    matching = [o for o in observed if o.key.kind == kind]
    assert matching, [o.key for o in observed]
    [alert] = matching
    assert (alert.severity, alert.key.condition) == (severity, condition)
    assert words in f"{alert.title} {alert.message} {alert.check_first}"


async def test_an_unavailable_apiservice_alert_carries_reason_message_and_its_service(
    sim: Simulator, gateway: KubeGateway
) -> None:
    breakage.apiservice_down(sim)
    [alert] = [o for o in await observe(gateway, datetime.now(UTC)) if o.key.kind == "APIService"]
    assert alert.reason == "MissingEndpoints"
    assert 'have no addresses with port name "https"' in alert.message
    assert "keda/keda-operator-metrics-apiserver" in alert.check_first


async def test_conditions_progressing_past_the_timeout_are_a_warning(
    sim: Simulator, gateway: KubeGateway
) -> None:
    breakage.stale_generation(sim)
    soon = await observe(gateway, datetime.now(UTC))
    later = await observe(gateway, datetime.now(UTC) + timedelta(hours=1))
    assert not [o for o in soon if o.key.kind == "Config"]
    [warning] = [o for o in later if o.key.kind == "Config"]
    assert warning.severity is Severity.WARNING


MISSING = [
    pytest.param(
        "delete_kai_config", "Config kai-config", "kai-config is missing", id="kai-config"
    ),
    pytest.param(
        "apiservice_missing",
        f"APIService {APISERVICE}",
        f"APIService {APISERVICE} is missing",
        id="apiservice",
    ),
]


@pytest.mark.parametrize(("action", "subject", "title"), MISSING)
async def test_alert_text_does_not_repeat_itself(
    sim: Simulator, gateway: KubeGateway, action: str, subject: str, title: str
) -> None:
    breakage.ACTIONS[action](sim)
    [alert] = [o for o in await observe(gateway, datetime.now(UTC)) if o.title == title]
    root = render_alerts.root_message(
        AlertState(alert, first_seen=datetime.now(UTC)), command="/kai"
    )

    assert root["text"].count(title) == 1, root["text"]
    assert alert.message and not alert.message.startswith(title)


@pytest.mark.parametrize(("action", "subject", "title"), MISSING)
async def test_missing_everywhere_for_an_absent_expected_object(
    sim: Simulator, gateway: KubeGateway, action: str, subject: str, title: str
) -> None:
    breakage.ACTIONS[action](sim)
    now = datetime.now(UTC)
    snapshot = await usecases.read_snapshot(gateway, "kai-scheduler", APISERVICE)
    report = health.build_report(
        snapshot, cluster="sim", now=now, progressing_timeout=TIMEOUT, apiservice_name=APISERVICE
    )
    [finding] = [f for f in report.findings if f.subject == subject]
    [alert] = [o for o in await observe(gateway, now) if o.key.subject == subject]

    assert finding.health is Health.MISSING
    assert alert.key.condition == "Missing"


def detect_in(snapshot: ClusterSnapshot) -> list[Observation]:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    report = health.build_report(snapshot, cluster="prod", now=now, progressing_timeout=TIMEOUT)
    return detect(snapshot, report, now)


SCHEDULER = "kai-scheduler/kai-scheduler-default"
OPERATOR = "kai-scheduler/kai-operator"
OPERATOR_DOWN = deployment("kai-operator", operand=False, available="False")
PROGRESSING_SHARD = shard(conditions=kai_conditions(3, Available=("False", "not yet")))


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"deployments": with_deployment(deployment("kai-scheduler-default", available="False"))},
         [(SCHEDULER, Severity.CRITICAL, "MinimumReplicasUnavailable", "no available replica")]),
        ({"deployments": with_deployment(deployment("kai-scheduler-default", replicas=0))},
         [(SCHEDULER, Severity.CRITICAL, "ScaledToZero", "scaled to 0 replicas")]),
        ({"deployments": without_deployment("kai-scheduler-default")},
         [(SCHEDULER, Severity.CRITICAL, "NotFound", "missing")]),
        ({"deployments": without_deployment("kai-scheduler-default"),
          "shards": (PROGRESSING_SHARD,)}, []),
        ({"deployments": without_deployment("kai-scheduler-default"), "kai_config": None},
         [("kai-config", Severity.CRITICAL, "NotFound", "kai-config is missing")]),
        ({"deployments": with_deployment(
            deployment("kai-scheduler-default", replicas=3, updated=3, available="False")
            | {"status": {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 1}})}, []),
        ({"deployments": with_deployment(OPERATOR_DOWN)},
         [(OPERATOR, Severity.WARNING, "MinimumReplicasUnavailable", "no available replica")]),
        ({"deployments": without_deployment("kai-operator")},
         [(OPERATOR, Severity.WARNING, "NotFound", "missing")]),
        ({"deployments": with_deployment(deployment("kai-operator", operand=False, replicas=0))},
         [(OPERATOR, Severity.WARNING, "ScaledToZero", "scaled to 0 replicas")]),
    ],
    ids=["healthy", "scheduler-unavailable", "scheduler-scaled-to-0", "scheduler-missing",
         "scheduler-not-created-yet", "kai-config-missing-says-it-all", "one-of-three-available",
         "operator-unavailable", "operator-missing", "operator-scaled-to-0"],
)  # fmt: skip
def test_scheduler_and_operator_deployments_alert_when_no_replica_is_available(
    changes: dict[str, Any], expected: list[tuple[str, Severity, str, str]]
) -> None:
    found = [
        (o.key.object, o.severity, o.reason, o.title.split(": ", 1)[-1])
        for o in detect_in(kai_snapshot(**changes))
    ]
    assert found == expected


def test_each_shard_has_its_own_scheduler_alert_named_after_the_config() -> None:
    config = kai_config(
        conditions=kai_conditions(3),
        spec={"namespace": "kai-operands", "global": {"schedulerName": "gpu"}},
    )
    shards = (
        shard("default", conditions=kai_conditions(3)),
        shard("a100", conditions=kai_conditions(3)),
    )
    up = deployment("gpu-default", "kai-operands")
    down = deployment("gpu-a100", "kai-operands", available="False")
    snapshot = kai_snapshot(
        kai_config=config, shards=shards, deployments=(*kai_snapshot().deployments, up, down)
    )
    [alert] = [o for o in detect_in(snapshot) if o.key.object.endswith("a100")]
    assert alert.key.object == "kai-operands/gpu-a100"
    assert "shard a100" in alert.check_first


NO_ENDPOINTS = "endpointslices for service/keda-operator-metrics-apiserver have no addresses"


@pytest.mark.parametrize(
    ("service", "title", "reason", "hint"),
    [
        pytest.param(
            apiservice("False", "MissingEndpoints", NO_ENDPOINTS),
            "Available is False (MissingEndpoints), backed by Service "
            "keda/keda-operator-metrics-apiserver port 443",
            "MissingEndpoints",
            "No ready pod backs Service keda/keda-operator-metrics-apiserver",
            id="false",
        ),
        pytest.param(
            apiservice("Unknown", "FailedDiscoveryCheck", "the check timed out"),
            "Available is Unknown: the aggregator could not check",
            "FailedDiscoveryCheck",
            "could not finish its availability check of Service keda/"
            "keda-operator-metrics-apiserver",
            id="unknown",
        ),
        pytest.param(
            apiservice(None),
            "no Available condition yet",
            "",
            "if it stays absent, the aggregator's availability checks are not running",
            id="no-condition",
        ),
    ],
)
def test_an_apiservice_whose_available_is_not_true_is_one_critical_alert_saying_which(
    service: dict[str, Any], title: str, reason: str, hint: str
) -> None:
    [alert] = [o for o in detect_in(kai_snapshot(apiservice=service)) if o.key.kind == "APIService"]

    assert (alert.key.object, alert.key.condition) == (APISERVICE, "Available")
    assert (alert.severity, alert.title, alert.reason) == (Severity.CRITICAL, title, reason)
    assert alert.message == (service["status"]["conditions"] or [{}])[0].get("message", "")
    assert hint in alert.check_first
    assert not alert.immediate


def test_an_available_apiservice_raises_nothing() -> None:
    assert detect_in(kai_snapshot(apiservice=apiservice("True"))) == []
