"""Which cluster states raise which alerts, read from the simulator as a live check reads them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.alerts import render as render_alerts
from bot.alerts import rules
from bot.alerts.model import AlertState, Observation, Severity
from bot.core.models import Health
from bot.health import report as health
from bot.health import usecase as usecases
from bot.kube.gateway import KubeGateway
from bot.sim import Simulator, breakage

APISERVICE = "v1beta1.external.metrics.k8s.io"
TIMEOUT = timedelta(minutes=10)


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["default"]) as running:
        yield running


async def observe(gateway: KubeGateway, now: datetime) -> list[Observation]:
    snapshot = await usecases.read_snapshot(gateway, "kai-scheduler", APISERVICE)
    report = health.build_report(
        snapshot, cluster="sim", now=now, progressing_timeout=TIMEOUT, apiservice_name=APISERVICE
    )
    return rules.detect(
        snapshot, report, now=now, progressing_timeout=TIMEOUT, apiservice_name=APISERVICE
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
    ],
    ids=["dependencies-missing", "kai-config-missing", "apiservice-unavailable",
         "apiservice-missing", "operator-unavailable"],
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
    root = render_alerts.root_message(AlertState(alert, first_seen=datetime.now(UTC)))

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
