"""A whole healthy cluster snapshot for the health-report tests, the report of one at a fixed
`now`, and a finding lookup."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from objects import apiservice, deployment, kai_conditions, kai_config, shard

from bot.core.models import ClusterSnapshot, Finding, HealthReport, RawObject
from bot.health import report
from bot.health.report import KAI_CRDS

NOW = datetime(2026, 8, 10, 12, 0, tzinfo=UTC)
TIMEOUT = timedelta(minutes=15)
RECENT = "2026-08-10T11:55:00Z"  # 5 minutes before NOW
OLD = "2026-08-10T11:35:00Z"  # 25 minutes before NOW
KAI_OPERANDS = ("admission", "binder", "pod-grouper", "podgroup-controller", "queue-controller")


def kai_snapshot(**changes: Any) -> ClusterSnapshot:
    """A healthy default install (KAI v0.17 chart, KEDA chart), with `changes` applied."""
    healthy = ClusterSnapshot(
        kai_config=kai_config(conditions=kai_conditions(3)),
        shards=(shard(conditions=kai_conditions(3)),),
        deployments=(
            deployment(
                "kai-operator", operand=False, labels={"app.kubernetes.io/managed-by": "Helm"}
            ),
            *(deployment(name) for name in KAI_OPERANDS),
            deployment("kai-scheduler-default"),
        ),
        crd_names=frozenset(KAI_CRDS)
        | {"scaledjobs.keda.sh", "helmreleases.helm.toolkit.fluxcd.io"},
        apiservice=apiservice(),
        kai_namespace="kai-scheduler",
    )
    return dataclasses.replace(healthy, **changes)


def with_deployment(replacement: dict[str, Any]) -> tuple[RawObject, ...]:
    """The healthy snapshot's Deployments with `replacement` swapped in (or added)."""
    name = replacement["metadata"]["name"]
    kept = [d for d in kai_snapshot().deployments if d["metadata"]["name"] != name]
    return (*kept, replacement)


def without_deployment(name: str) -> tuple[RawObject, ...]:
    return tuple(d for d in kai_snapshot().deployments if d["metadata"]["name"] != name)


def find_finding(report: HealthReport, subject: str) -> Finding:
    """The one finding about `subject` (fails the test when there is not exactly one)."""
    matches = [f for f in report.findings if f.subject == subject]
    assert len(matches) == 1, [f.subject for f in report.findings]
    return matches[0]


def report_of(snap: ClusterSnapshot) -> HealthReport:
    """The live report of `snap` on cluster `prod` at NOW, with a 15-minute timeout."""
    return report.build_report(snap, cluster="prod", now=NOW, progressing_timeout=TIMEOUT)
