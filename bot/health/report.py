"""The live KAI / external-metrics health report, built from one `ClusterSnapshot`.

Adds to the per-object rules what conditions cannot show: `kai-config` missing, the operator
down (conditions frozen), the operands of every workload kind and the per-shard scheduler
Deployments, the KAI CRDs, and an operator that stopped reconciling (conditions Progressing, or
a pass reported running, past a timeout). Pure: no I/O, `now` comes from the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core import conditions
from bot.core.models import ClusterSnapshot, Finding, Health, HealthReport, RawObject
from bot.health import deployments, operands
from bot.rules import apiservice, kai

KAI_CONFIG_NAME = "kai-config"
OPERATOR_DEPLOYMENT = "kai-operator"
DEFAULT_NAMESPACE = "kai-scheduler"
DEFAULT_SCHEDULER_NAME = "kai-scheduler"
EXTERNAL_METRICS_APISERVICE = "v1beta1.external.metrics.k8s.io"
KAI_CRDS = (
    "configs.kai.scheduler",
    "schedulingshards.kai.scheduler",
    "topologies.kai.scheduler",
    "queues.scheduling.run.ai",
    "podgroups.scheduling.run.ai",
    "bindrequests.scheduling.run.ai",
)
_FROZEN = "the KAI conditions are frozen at their last values while the operator is down"


@dataclass(frozen=True)
class _Context:
    operand_namespace: str
    scheduler_name: str
    config_missing: bool
    now: datetime
    progressing_timeout: timedelta


def build_report(
    snapshot: ClusterSnapshot,
    *,
    cluster: str,
    now: datetime,
    progressing_timeout: timedelta,
    apiservice_name: str = EXTERNAL_METRICS_APISERVICE,
) -> HealthReport:
    """Checks KAI and the external-metrics APIService in one snapshot of a cluster.

    Args:
        snapshot: what the gateway read (None objects answered 404).
        cluster: the cluster's configured name, carried into the report.
        now: the time of the check; conditions Progressing for longer than
            `progressing_timeout` since their last write read "operator not reconciling".
        apiservice_name: the APIService to check.

    Returns:
        One finding per subject checked, healthy ones included.
    """
    ctx = _context(snapshot, now, progressing_timeout)
    findings = [_config_finding(snapshot.kai_config, ctx), _operator_finding(snapshot)]
    for shard in sorted(snapshot.shards, key=conditions.object_name):
        findings += _shard_findings(shard, snapshot.deployments, ctx)
    schedulers = {_scheduler_deployment(shard, ctx) for shard in snapshot.shards}
    found = operands.find_operands(
        ctx.operand_namespace, deployments=snapshot.deployments, daemonsets=snapshot.daemonsets
    )
    owned = [o for o in found if o.name not in schedulers | {OPERATOR_DEPLOYMENT}]
    findings += operands.assess_operands(owned, ctx.operand_namespace)
    if snapshot.crd_names is not None:
        findings.append(_crd_finding(snapshot.crd_names))
    findings.append(_apiservice_finding(snapshot.apiservice, apiservice_name))
    return HealthReport(cluster=cluster, findings=tuple(findings), checked_at=now)


def operand_namespace(snapshot: ClusterSnapshot) -> str:
    """Where the operator puts its operands and shard schedulers: kai-config's `spec.namespace`."""
    spec = conditions.spec(snapshot.kai_config or {})
    return conditions.as_text(spec.get("namespace")) or snapshot.kai_namespace


def scheduler_name(snapshot: ClusterSnapshot) -> str:
    """kai-config's `spec.global.schedulerName`, or KAI's default."""
    spec = conditions.spec(snapshot.kai_config or {})
    named = conditions.as_text(conditions.as_mapping(spec.get("global")).get("schedulerName"))
    return named or DEFAULT_SCHEDULER_NAME


def shard_scheduler(scheduler: str, shard: RawObject) -> str:
    """KAI names a shard's scheduler Deployment `<global.schedulerName>-<shard name>`."""
    return f"{scheduler}-{conditions.object_name(shard)}"


def _context(snapshot: ClusterSnapshot, now: datetime, timeout: timedelta) -> _Context:
    return _Context(
        operand_namespace=operand_namespace(snapshot),
        scheduler_name=scheduler_name(snapshot),
        config_missing=snapshot.kai_config is None,
        now=now,
        progressing_timeout=timeout,
    )


def _config_finding(config: RawObject | None, ctx: _Context) -> Finding:
    subject = f"Config {KAI_CONFIG_NAME}"
    if config is None:
        return Finding(
            subject,
            Health.MISSING,
            f"{KAI_CONFIG_NAME} is missing: the KAI operator garbage-collects every operand "
            "(schedulers' service account, binder, admission, pod-grouper, ...) while it is "
            "missing, so nothing new gets scheduled (KAI issue #1751)",
            "Recreate it (helm upgrade runs the kai-config-deployer Job; in GitOps mode sync "
            "the Application). An Argo CD prune of the untracked object is the usual cause.",
        )
    return _finding(subject, _with_timeout(kai.assess_kai_object(config), config, ctx))


def _operator_finding(snapshot: ClusterSnapshot) -> Finding:
    namespace = snapshot.kai_namespace
    subject = deployments.deployment_subject(namespace, OPERATOR_DEPLOYMENT)
    operator = deployments.find_deployment(snapshot.deployments, namespace, OPERATOR_DEPLOYMENT)
    if operator is None:
        return Finding(subject, Health.MISSING, f"missing: {_FROZEN}")
    if deployments.desired_replicas(operator) == 0:
        return Finding(subject, Health.DEGRADED, f"scaled to 0 replicas: {_FROZEN}")
    reading = deployments.assess_deployment(operator)
    if reading.health is Health.DEGRADED:
        return Finding(subject, reading.health, f"{reading.headline}; {_FROZEN}", reading.detail)
    return _finding(subject, reading)


def _shard_findings(
    shard: RawObject, all_deployments: tuple[RawObject, ...], ctx: _Context
) -> list[Finding]:
    reading = _with_timeout(kai.assess_kai_object(shard), shard, ctx)
    if ctx.config_missing and reading.health is Health.HEALTHY:
        # With kai-config gone the operator reconciles shards against an empty desired state,
        # which can leave every condition True.
        reading = conditions.Assessment(
            Health.UNKNOWN,
            f"conditions read healthy but cannot be trusted while {KAI_CONFIG_NAME} is missing",
        )
    name = _scheduler_deployment(shard, ctx)
    scheduler = deployments.find_deployment(all_deployments, ctx.operand_namespace, name)
    return [
        _finding(f"SchedulingShard {conditions.object_name(shard)}", reading),
        _finding(
            deployments.deployment_subject(ctx.operand_namespace, name),
            _assess_scheduler(scheduler, conditions.object_name(shard), reading),
        ),
    ]


def _assess_scheduler(
    scheduler: RawObject | None, shard_name: str, shard_reading: conditions.Assessment
) -> conditions.Assessment:
    """A shard's scheduler Deployment; not there yet is expected only while the shard progresses."""
    if scheduler is not None:
        return deployments.assess_deployment(scheduler, as_kai=True)
    if shard_reading.health is Health.PROGRESSING:
        return conditions.Assessment(
            Health.PROGRESSING, f"not created yet: SchedulingShard {shard_name} is Progressing"
        )
    return conditions.Assessment(
        Health.MISSING,
        f"missing: no scheduler runs for SchedulingShard {shard_name}, "
        "so its pods are not scheduled",
    )


def _scheduler_deployment(shard: RawObject, ctx: _Context) -> str:
    return shard_scheduler(ctx.scheduler_name, shard)


def _crd_finding(crd_names: frozenset[str]) -> Finding:
    missing = [name for name in KAI_CRDS if name not in crd_names]
    if not missing:
        return Finding("KAI CRDs", Health.HEALTHY, f"all {len(KAI_CRDS)} present")
    return Finding(
        "KAI CRDs",
        Health.MISSING,
        f"{len(missing)} of {len(KAI_CRDS)} missing: {', '.join(missing)}",
    )


def _apiservice_finding(service: RawObject | None, name: str) -> Finding:
    subject = f"APIService {name}"
    if service is None:
        return Finding(
            subject,
            Health.MISSING,
            f"APIService {name} is missing: KEDA's external metrics are not served",
        )
    return _finding(subject, apiservice.assess_apiservice(service))


def _with_timeout(
    reading: conditions.Assessment, obj: RawObject, ctx: _Context
) -> conditions.Assessment:
    """An operator that stopped reconciling (`kai.find_stall`: Progressing, or a pass reported
    running, past the timeout) turns the reading Degraded, keeping what it said as detail."""
    stall = kai.find_stall(obj, reading, ctx.now, ctx.progressing_timeout)
    if stall is None:
        return reading
    return conditions.Assessment(Health.DEGRADED, stall.headline, reading.message)


def _finding(subject: str, reading: conditions.Assessment) -> Finding:
    return Finding(subject, reading.health, reading.headline, reading.detail)
