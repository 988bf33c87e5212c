"""The live KAI check on what each KAI release writes (v0.12, v0.13, v0.16, v0.17), with a fixed
`now`: the conditions of #1060 (`Ready`, `Reconciling` True only while a pass runs) and the
operands of any workload kind (v0.16's NUMA placement exporter DaemonSet)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from health_snapshots import (
    KAI_OPERANDS,
    NOW,
    OLD,
    RECENT,
    TIMEOUT,
    find_finding,
    kai_snapshot,
    report_of,
)
from objects import (
    RELEASE_SHAPES,
    condition,
    daemonset,
    deployment,
    kai_config,
    release_conditions,
    shard,
)

from bot.alerts import rules
from bot.alerts.verdicts import unchanged_until
from bot.core.models import ClusterSnapshot, Health
from bot.health import report as health
from bot.rules import kai

RELEASES_WITH_READY = ("v0.13", "v0.16", "v0.17")
CONFIG = "Config kai-config"
EXPORTER = "DaemonSet kai-scheduler/numa-placement-exporter"


def running_pass(release: str, since: str) -> list[dict[str, Any]]:
    """A finished pass's conditions, then a new pass begun at `since` and not ended (the
    operator died in `Deploy`): `Reconciling` True, the rest as the last pass left them."""
    began = condition(
        "Reconciling", "True", 3, reason="reconciling", message="Reconciliation in progress"
    )
    return release_conditions(
        release, 3, at=OLD, Reconciling={**began, "lastTransitionTime": since}
    )


def alerts_of(snap: ClusterSnapshot) -> list[rules.Observation]:
    return rules.detect(
        snap,
        report_of(snap),
        now=NOW,
        progressing_timeout=TIMEOUT,
        apiservice_name=health.EXTERNAL_METRICS_APISERVICE,
        command="/kai",
    )


@pytest.mark.parametrize("release", RELEASE_SHAPES)
def test_a_healthy_install_reads_healthy_on_every_release(release: str) -> None:
    """v0.12 leaves Reconciling True for good, written long ago: that is no stall."""
    conds = release_conditions(release, 3, at=OLD)
    snap = kai_snapshot(kai_config=kai_config(conditions=conds), shards=(shard(conditions=conds),))

    report = report_of(snap)

    assert report.verdict is Health.HEALTHY, report.problems
    assert alerts_of(snap) == []


@pytest.mark.parametrize("release", RELEASES_WITH_READY)
def test_a_pass_reported_running_past_the_threshold_is_operator_not_reconciling(
    release: str,
) -> None:
    snap = kai_snapshot(kai_config=kai_config(conditions=running_pass(release, OLD)))

    config = find_finding(report_of(snap), CONFIG)
    [alert] = alerts_of(snap)

    assert config.health is Health.DEGRADED
    assert config.summary == (
        "operator not reconciling: a pass it began never ended, Reconciling True for 25m"
    )
    assert "Deployed, Available and DependenciesFulfilled are True" in config.detail
    assert (alert.key.condition, alert.severity.value) == ("Reconciling", "warning")
    assert alert.title == config.summary
    assert "sets Reconciling False at the end of every pass" in alert.check_first


@pytest.mark.parametrize("release", RELEASES_WITH_READY)
def test_a_pass_running_within_the_threshold_changes_no_verdict(release: str) -> None:
    snap = kai_snapshot(kai_config=kai_config(conditions=running_pass(release, RECENT)))

    assert find_finding(report_of(snap), CONFIG).health is Health.HEALTHY
    assert alerts_of(snap) == []
    # The cached answer of the alert check is judged again when the threshold passes.
    assert unchanged_until(snap, TIMEOUT) == NOW + timedelta(minutes=10)


def test_ready_false_alone_changes_no_verdict() -> None:
    """`Ready` is a copy of `Available` (#1060): the verdict keys on `Available`, which the
    external-Prometheus prober may rewrite while `Ready` keeps the reconcile's answer."""
    conds = release_conditions("v0.17", 3, Ready=("False", "System not ready"))

    assert kai.assess_kai_object(kai_config(conditions=conds)).health is Health.HEALTHY


def test_the_stall_says_what_shows_it_and_since_when() -> None:
    config = kai_config(conditions=running_pass("v0.17", OLD))
    reading = kai.assess_kai_object(config)

    stall = kai.find_stall(config, reading, NOW, TIMEOUT)

    assert stall is not None
    assert (stall.shown_by, stall.since) == (
        "Reconciling",
        datetime(2026, 8, 10, 11, 35, tzinfo=UTC),
    )
    assert kai.find_stall(config, reading, NOW - timedelta(minutes=11), TIMEOUT) is None


def test_reconciling_true_without_ready_is_v0_12_and_tells_nothing() -> None:
    stuck_looking = kai_config(conditions=release_conditions("v0.12", 3, at=OLD))

    assert kai.reconciling_since(stuck_looking) is None


@pytest.mark.parametrize("release", ("v0.16", "v0.17"))
def test_the_numa_placement_exporter_daemonset_is_an_operand(release: str) -> None:
    snap = kai_snapshot(daemonsets=(daemonset(),))

    operands = find_finding(report_of(snap), "KAI operands in kai-scheduler")

    names = ", ".join(sorted([*KAI_OPERANDS, "numa-placement-exporter (DaemonSet)"]))
    assert operands.summary == f"6 workloads available: {names}"


def test_an_exporter_pod_not_available_on_a_node_is_a_degraded_operand() -> None:
    snap = kai_snapshot(daemonsets=(daemonset(desired=3, available=2),))

    found = find_finding(report_of(snap), EXPORTER)

    assert found.health is Health.DEGRADED
    assert found.summary.startswith("not available (2 of 3 nodes' pods available)")
    assert report_of(snap).verdict is Health.DEGRADED


def test_an_exporter_with_no_node_to_run_on_is_available_as_kai_counts_it() -> None:
    snap = kai_snapshot(daemonsets=(daemonset(desired=0),))

    assert report_of(snap).verdict is Health.HEALTHY


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(daemonset("node-exporter"), id="another-daemonset"),
        pytest.param(daemonset(namespace="monitoring", desired=2, available=0), id="elsewhere"),
    ],
)
def test_daemonsets_the_operator_does_not_own_are_left_alone(other: dict[str, Any]) -> None:
    other["status"]["numberAvailable"] = 0
    snap = kai_snapshot(daemonsets=(other,))

    assert report_of(snap).verdict is Health.HEALTHY


def test_a_daemonset_labelled_managed_by_the_operator_is_an_operand_whatever_its_name() -> None:
    labels = {"app.kubernetes.io/managed-by": "kai-operator"}
    snap = kai_snapshot(daemonsets=(daemonset("gpu-probe", desired=2, available=1, labels=labels),))

    assert find_finding(report_of(snap), "DaemonSet kai-scheduler/gpu-probe").health is (
        Health.DEGRADED
    )


@pytest.mark.parametrize("release", RELEASE_SHAPES)
def test_operands_labelled_as_each_release_labels_them_are_all_found(release: str) -> None:
    """`app=<name>` only up to v0.16.0; the managed-by label on Deployments from v0.16.1."""
    labelled = release in ("v0.16", "v0.17")
    deployments = [deployment(name, operand=labelled) for name in KAI_OPERANDS]
    exporter = (daemonset(),) if release in ("v0.16", "v0.17") else ()
    snap = kai_snapshot(
        deployments=(*kai_snapshot().deployments[:1], *deployments), daemonsets=exporter
    )

    operands = find_finding(report_of(snap), "KAI operands in kai-scheduler")

    assert operands.health is Health.HEALTHY
    assert operands.summary.startswith(f"{len(KAI_OPERANDS) + len(exporter)} ")
