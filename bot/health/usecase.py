"""One operation end to end, shared by Slack listeners, the CLI and scheduled jobs.

Gateways come in as parameters; decisions are delegated to the pure modules. No Slack here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from bot.config.settings import Settings
from bot.core.models import ClusterSnapshot, HealthReport, RawObject
from bot.health import report
from bot.kube import kinds
from bot.kube.ports import KubeReader

OPERATOR_LABEL = "app.kubernetes.io/managed-by=kai-operator"
KAI_CONFIG_NAME = "kai-config"


async def read_snapshot(
    kube: KubeReader, kai_namespace: str, apiservice: str, *, whole: bool = True
) -> ClusterSnapshot:
    """Everything the KAI/APIService check looks at, in a constant number of API requests.

    Six reads run at once (Config, shards, Deployments and DaemonSets in the KAI namespace, CRD
    names, the APIService); the workloads are listed again where the Config puts operands
    elsewhere. Without `whole` neither the CRDs nor the DaemonSets are read (the alert check: no
    alert rests on them, and a fleet's checks would follow every cluster's for nothing).

    Raises:
        KubeError: the cluster is unreachable or forbids one of the reads.
    """
    # Unpaged: these lists are bounded by what one KAI install creates, and one request each keeps
    # the check's cost constant however many shards and operands there are.
    config, shards, deployments, daemonsets, crds, service = await asyncio.gather(
        kube.get_object(kinds.KAI_CONFIG, KAI_CONFIG_NAME),
        kube.list_objects(kinds.SCHEDULING_SHARD, page_size=None),
        kube.list_objects(kinds.DEPLOYMENT, kai_namespace, page_size=None),
        _daemonsets(kube, kai_namespace) if whole else _nothing(),
        _crds(kube) if whole else _nothing(),
        kube.get_object(kinds.APISERVICE, apiservice),
    )
    operand_namespace = _operand_namespace(config, kai_namespace)
    if operand_namespace != kai_namespace:
        deployments += await kube.list_objects(kinds.DEPLOYMENT, operand_namespace, page_size=None)
        if whole:
            daemonsets = (daemonsets or []) + await _daemonsets(kube, operand_namespace)
    return ClusterSnapshot(
        kai_config=config,
        shards=tuple(shards),
        deployments=tuple(deployments),
        crd_names=None if crds is None else frozenset(_names(crds)),
        apiservice=service,
        kai_namespace=kai_namespace,
        daemonsets=tuple(daemonsets or ()),
    )


async def _daemonsets(kube: KubeReader, namespace: str) -> list[RawObject]:
    """The DaemonSets of a namespace: KAI v0.16's NUMA placement exporter is one of its operands
    (docs/workloads.md)."""
    return await kube.list_objects(kinds.DAEMON_SET, namespace, page_size=None)


async def _crds(kube: KubeReader) -> list[RawObject]:
    return await kube.list_objects(kinds.CRD, metadata_only=True, page_size=None)


async def _nothing() -> None:
    return None


def _names(objects: list[RawObject]) -> list[str]:
    return [str(o.get("metadata", {}).get("name", "")) for o in objects]


def _operand_namespace(config: RawObject | None, default: str) -> str:
    spec = (config or {}).get("spec") or {}
    return str(spec.get("namespace") or default)


async def check_health(kube: KubeReader, settings: Settings, now: datetime) -> HealthReport:
    """The KAI Scheduler and external-metrics APIService report for the gateway's cluster.

    Raises:
        KubeError: the cluster is unreachable or forbids one of the reads.
    """
    snapshot = await read_snapshot(kube, settings.kai.namespace, settings.keda.apiservice)
    return report.build_report(
        snapshot,
        cluster=kube.cluster,
        now=now,
        progressing_timeout=settings.kai.progressing_timeout,
        apiservice_name=settings.keda.apiservice,
    )


class SharedChecks(Protocol):
    """One run of a cluster's check for everyone asking at once (`deps.health_checks`)."""

    async def run(self, key: str, work: Callable[[], Awaitable[HealthReport]]) -> HealthReport: ...


async def shared_check(
    checks: SharedChecks, kube: KubeReader, settings: Settings, now: datetime
) -> HealthReport:
    """`check_health`, run once for every concurrent asker about the gateway's cluster.

    Raises:
        KubeError: as `check_health`.
    """
    return await checks.run(kube.cluster, lambda: check_health(kube, settings, now))
