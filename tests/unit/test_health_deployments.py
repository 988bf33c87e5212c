"""The health report's Deployment checks: operator, operands, per-shard schedulers."""

from __future__ import annotations

from typing import Any

import pytest
from health_snapshots import (
    KAI_OPERANDS,
    RECENT,
    find_finding,
    kai_snapshot,
    report_of,
    with_deployment,
    without_deployment,
)
from objects import deployment, kai_conditions, kai_config, shard

from bot.core.models import Health

OPERATOR = "Deployment kai-scheduler/kai-operator"
SCHEDULER = "Deployment kai-scheduler/kai-scheduler-default"


def test_missing_everywhere_a_missing_shard_scheduler_deployment_is_missing() -> None:
    deployments = without_deployment("kai-scheduler-default")

    found = find_finding(report_of(kai_snapshot(deployments=deployments)), SCHEDULER)

    assert found.health is Health.MISSING
    assert "no scheduler runs for SchedulingShard default" in found.summary


def test_a_new_shard_without_its_scheduler_yet_is_progressing() -> None:
    new = shard("gpu-a100", created=RECENT)

    report = report_of(kai_snapshot(shards=(*kai_snapshot().shards, new)))

    found = find_finding(report, "Deployment kai-scheduler/kai-scheduler-gpu-a100")
    assert found.health is Health.PROGRESSING
    assert "not created yet" in found.summary


def test_scheduler_name_and_namespace_come_from_kai_config() -> None:
    config = kai_config(
        conditions=kai_conditions(3),
        spec={"namespace": "kai-system", "global": {"schedulerName": "gpu-sched"}},
    )
    deployments = (
        deployment("kai-operator", operand=False),
        *(deployment(name, "kai-system") for name in KAI_OPERANDS),
        deployment("gpu-sched-default", "kai-system"),
    )

    report = report_of(kai_snapshot(kai_config=config, deployments=deployments))

    assert find_finding(report, "Deployment kai-system/gpu-sched-default").health is Health.HEALTHY
    assert find_finding(report, "KAI operands in kai-system").health is Health.HEALTHY
    assert report.verdict is Health.HEALTHY


@pytest.mark.parametrize(
    ("operator", "summary", "health"),
    [
        pytest.param(None, "missing: the KAI conditions are frozen", Health.MISSING, id="missing"),
        pytest.param(
            deployment("kai-operator", available="False", updated=1, operand=False),
            "not available (1/1 updated, 0 available): Available is False",
            Health.DEGRADED,
            id="not-available",
        ),
        pytest.param(
            deployment("kai-operator", replicas=0, operand=False),
            "scaled to 0 replicas: the KAI conditions are frozen",
            Health.DEGRADED,
            id="scaled-to-zero",
        ),
    ],
)
def test_operator_down_is_degraded_and_says_conditions_are_frozen(
    operator: dict[str, Any] | None, summary: str, health: Health
) -> None:
    deployments = without_deployment("kai-operator")
    if operator is not None:
        deployments += (operator,)

    found = find_finding(report_of(kai_snapshot(deployments=deployments)), OPERATOR)

    assert found.health is health
    assert summary in found.summary
    assert "frozen at their last values while the operator is down" in found.summary


def test_an_unavailable_operand_gets_its_own_degraded_finding() -> None:
    report = report_of(
        kai_snapshot(deployments=with_deployment(deployment("binder", available="False")))
    )

    binder = find_finding(report, "Deployment kai-scheduler/binder")
    assert binder.health is Health.DEGRADED
    assert binder.summary.startswith("not available (1/1 updated, 0 available)")
    assert binder.detail == "Deployment does not have minimum availability."
    others = find_finding(report, "KAI operands in kai-scheduler")
    assert (
        others.summary
        == "4 Deployments available: admission, pod-grouper, podgroup-controller, queue-controller"
    )
    assert report.verdict is Health.DEGRADED


def test_an_operand_not_every_replica_updated_is_not_available_as_kai_counts_it() -> None:
    """KAI-Scheduler pkg/operator/operands/common/common.go isControllerAvailable."""
    rolling = deployment("admission", replicas=2, updated=1, available="True")

    found = find_finding(
        report_of(kai_snapshot(deployments=with_deployment(rolling))),
        "Deployment kai-scheduler/admission",
    )

    assert found.health is Health.DEGRADED
    assert found.summary.startswith("not available (1/2 updated, 1 available): KAI counts it")


def test_a_kai_release_labelling_operands_only_app_name_has_its_operands_found() -> None:
    """KAI v0.13: operands carry only `app=<name>` (operands/common BuildDeploymentSpec)."""
    old = tuple(deployment(name, operand=False) for name in KAI_OPERANDS if name != "binder")
    broken = deployment("binder", operand=False, available="False")
    stranger = deployment("web", operand=False, available="False")
    snap = kai_snapshot(
        deployments=(
            deployment("kai-operator", operand=False),
            *old,
            broken,
            stranger,
            deployment("kai-scheduler-default"),
        )
    )

    report = report_of(snap)

    binder = find_finding(report, "Deployment kai-scheduler/binder")
    assert binder.health is Health.DEGRADED
    others = find_finding(report, "KAI operands in kai-scheduler")
    assert others.summary == (
        "4 Deployments available: admission, pod-grouper, podgroup-controller, queue-controller"
    )
    assert all("web" not in f.subject for f in report.findings)


def test_a_deployment_without_replicas_defaults_to_one() -> None:
    defaulted = deployment("queue-controller", replicas=None)

    report = report_of(kai_snapshot(deployments=with_deployment(defaulted)))

    assert report.verdict is Health.HEALTHY


def test_deployments_outside_the_kai_namespace_or_not_managed_by_kai_are_ignored() -> None:
    extra = (
        deployment("binder", "other-team", available="False"),
        deployment("grafana", available="False", operand=False),
    )

    report = report_of(kai_snapshot(deployments=(*kai_snapshot().deployments, *extra)))

    assert report.verdict is Health.HEALTHY


def test_no_operand_deployments_at_all_is_degraded() -> None:
    deployments = (deployment("kai-operator", operand=False), deployment("kai-scheduler-default"))

    found = find_finding(
        report_of(kai_snapshot(deployments=deployments)), "KAI operands in kai-scheduler"
    )

    assert found.health is Health.DEGRADED
    assert "app.kubernetes.io/managed-by=kai-operator" in found.summary
