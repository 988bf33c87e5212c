"""The live KAI / APIService health report built from a cluster snapshot, with a fixed `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from health_snapshots import KAI_OPERANDS, find_finding, kai_snapshot
from objects import DEPS_MISSING_MESSAGE, apiservice, kai_conditions, kai_config, shard

from bot.core.models import ClusterSnapshot, Health, HealthReport
from bot.health import report as health

NOW = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
TIMEOUT = timedelta(minutes=15)
RECENT = "2026-08-10T11:55:00Z"  # 5 minutes before NOW
OLD = "2026-08-10T11:35:00Z"  # 25 minutes before NOW
OPERATOR = "Deployment kai-scheduler/kai-operator"
SCHEDULER = "Deployment kai-scheduler/kai-scheduler-default"
APISERVICE = "APIService v1beta1.external.metrics.k8s.io"


def report_of(snap: ClusterSnapshot, **kwargs: Any) -> HealthReport:
    return health.build_report(snap, cluster="prod", now=NOW, progressing_timeout=TIMEOUT, **kwargs)


def test_a_healthy_cluster_lists_every_subject_checked_as_healthy() -> None:
    report = report_of(kai_snapshot())

    assert report.verdict is Health.HEALTHY
    assert (report.cluster, report.checked_at) == ("prod", NOW)
    assert [f.subject for f in report.findings] == [
        "Config kai-config",
        OPERATOR,
        "SchedulingShard default",
        SCHEDULER,
        "KAI operands in kai-scheduler",
        "KAI CRDs",
        APISERVICE,
    ]
    assert all(f.health is Health.HEALTHY for f in report.findings)
    operands = find_finding(report, "KAI operands in kai-scheduler").summary
    assert operands == f"5 Deployments available: {', '.join(KAI_OPERANDS)}"


def test_missing_kai_config_is_critical_and_explains_operand_garbage_collection() -> None:
    report = report_of(kai_snapshot(kai_config=None))

    config = find_finding(report, "Config kai-config")
    assert config.health is Health.MISSING
    assert "garbage-collects every operand" in config.summary
    assert "#1751" in config.summary
    assert report.verdict is Health.MISSING


def test_shard_conditions_are_not_trusted_while_kai_config_is_missing() -> None:
    report = report_of(kai_snapshot(kai_config=None))

    shard_finding = find_finding(report, "SchedulingShard default")
    assert shard_finding.health is Health.UNKNOWN
    assert "cannot be trusted while kai-config is missing" in shard_finding.summary


def test_dependencies_missing_config_is_degraded_with_the_verbatim_message() -> None:
    config = kai_config(
        generation=2,
        conditions=kai_conditions(2, DependenciesFulfilled=("False", DEPS_MISSING_MESSAGE)),
    )

    found = find_finding(report_of(kai_snapshot(kai_config=config)), "Config kai-config")

    assert found.health is Health.DEGRADED
    assert found.summary == "DependenciesFulfilled is False at generation 2"
    assert found.detail == DEPS_MISSING_MESSAGE


@pytest.mark.parametrize(
    ("config", "health", "summary"),
    [
        pytest.param(
            kai_config(generation=5, conditions=kai_conditions(4, at=OLD)),
            Health.DEGRADED,
            "operator not reconciling: Progressing for 25m",
            id="stale-generation-past-timeout",
        ),
        pytest.param(
            kai_config(generation=5, conditions=kai_conditions(4, at=RECENT)),
            Health.PROGRESSING,
            "conditions are from generation 4",
            id="stale-generation-within-timeout",
        ),
        pytest.param(
            kai_config(generation=1, created="2026-08-10T10:30:00Z"),
            Health.DEGRADED,
            "operator not reconciling: Progressing for 1h30m",
            id="no-status-created-long-ago",
        ),
        pytest.param(
            kai_config(generation=1, created=RECENT),
            Health.PROGRESSING,
            "no status.conditions yet",
            id="no-status-just-created",
        ),
        pytest.param(
            kai_config(generation=3, conditions=kai_conditions(3, at=OLD)),
            Health.HEALTHY,
            "are True at generation 3",
            id="healthy-conditions-never-time-out",
        ),
    ],
)
def test_config_progressing_past_the_timeout_reads_as_operator_not_reconciling(
    config: dict[str, Any], health: Health, summary: str
) -> None:
    found = find_finding(report_of(kai_snapshot(kai_config=config)), "Config kai-config")

    assert found.health is health
    assert summary in found.summary


def test_timed_out_config_keeps_the_progressing_reason_in_the_detail() -> None:
    config = kai_config(generation=5, conditions=kai_conditions(4, at=OLD))

    found = find_finding(report_of(kai_snapshot(kai_config=config)), "Config kai-config")

    assert "conditions are from generation 4, object is at generation 5" in found.detail


def test_a_fresh_spec_edit_does_not_time_out_at_once() -> None:
    # Generation 5 was written 2 minutes ago (managedFields), the conditions 25 minutes ago.
    config = kai_config(generation=5, conditions=kai_conditions(4, at=OLD))
    config["metadata"]["managedFields"] = [
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-08-10T11:58:00Z"}
    ]

    found = find_finding(report_of(kai_snapshot(kai_config=config)), "Config kai-config")

    assert found.health is Health.PROGRESSING


def test_shard_rollout_past_the_timeout_is_degraded() -> None:
    stuck = shard(
        conditions=kai_conditions(
            3,
            at=OLD,
            Available=(
                "False",
                "SchedulerForShard: Deployment [kai-scheduler-default] is not available\n"
                "SchedulerForShard: not available",
            ),
        )
    )

    found = find_finding(report_of(kai_snapshot(shards=(stuck,))), "SchedulingShard default")

    assert found.health is Health.DEGRADED
    assert found.summary == "operator not reconciling: Progressing for 25m"
    assert "SchedulerForShard: not available" in found.detail


def test_missing_kai_crds_are_named_in_one_finding() -> None:
    crds = frozenset(health.KAI_CRDS) - {
        "topologies.kai.scheduler",
        "bindrequests.scheduling.run.ai",
    }

    found = find_finding(report_of(kai_snapshot(crd_names=crds)), "KAI CRDs")

    assert found.health is Health.MISSING
    assert (
        found.summary == "2 of 6 missing: topologies.kai.scheduler, bindrequests.scheduling.run.ai"
    )


def test_missing_everywhere_a_missing_apiservice_is_missing() -> None:
    found = find_finding(report_of(kai_snapshot(apiservice=None)), APISERVICE)

    assert found.health is Health.MISSING
    assert found.summary == (
        "APIService v1beta1.external.metrics.k8s.io is missing: "
        "KEDA's external metrics are not served"
    )


def test_an_unavailable_apiservice_reports_reason_service_and_verbatim_message() -> None:
    message = 'service/keda-operator-metrics-apiserver in "keda" is not present'

    found = find_finding(
        report_of(kai_snapshot(apiservice=apiservice("False", "ServiceNotFound", message))),
        APISERVICE,
    )

    assert found.health is Health.DEGRADED
    assert "ServiceNotFound" in found.summary
    assert "keda/keda-operator-metrics-apiserver" in found.summary
    assert found.detail == message


def test_the_apiservice_name_is_configurable() -> None:
    report = report_of(
        kai_snapshot(apiservice=None), apiservice_name="v1beta1.custom.metrics.k8s.io"
    )

    assert find_finding(report, "APIService v1beta1.custom.metrics.k8s.io").health is Health.MISSING


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [
        pytest.param({}, Health.HEALTHY, id="all-healthy"),
        pytest.param(
            {"shards": (shard(conditions=kai_conditions(3, Available=("False", "x"), at=RECENT)),)},
            Health.PROGRESSING,
            id="one-progressing",
        ),
        pytest.param(
            {
                "shards": (
                    shard(conditions=kai_conditions(3, Available=("False", "x"), at=RECENT)),
                ),
                "apiservice": None,
            },
            Health.MISSING,
            id="progressing-and-missing",
        ),
        pytest.param({"kai_config": None, "apiservice": None}, Health.MISSING, id="missing-wins"),
    ],
)
def test_the_overall_verdict_is_the_worst_finding(changes: dict[str, Any], verdict: Health) -> None:
    assert report_of(kai_snapshot(**changes)).verdict is verdict
