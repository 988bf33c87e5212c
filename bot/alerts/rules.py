"""What is worth an alert in one cluster snapshot, and the "cannot check" alert.

Critical: `DependenciesFulfilled` False at the current generation on kai-config; kai-config
missing; the external-metrics APIService missing, or its `Available` condition not True (False,
Unknown, or not there at all); a shard's scheduler Deployment (`<schedulerName>-<shard>`) with
no available replica or missing. Warnings: KAI conditions Progressing longer than
`kai.progressing_timeout`; the kai-operator Deployment with no available replica or missing
(docs/design.md §2 "Alerts"). Reuses the health report's findings and the per-object rules; pure: no
I/O, `now` comes from the caller.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.alerts.model import AlertKey, Observation, Severity
from bot.core import conditions, errors
from bot.core.durations import format_duration
from bot.core.models import ClusterSnapshot, Finding, Health, HealthReport, RawObject
from bot.health import deployments
from bot.health import report as health  # beside the `report` each rule reads
from bot.rules import apiservice, kai

DEPENDENCIES = "DependenciesFulfilled"
_CHECK_DEPENDENCIES = (
    "The message above names what is missing (with prometheus enabled in kai-config: the "
    "Prometheus operator and its CRDs). Install it, or turn that feature off in kai-config's "
    "spec; `{command} health` shows when the operator agrees."
)
_CHECK_OPERATOR = (
    "While it is down the KAI conditions are frozen, so other KAI alerts may be stale. The "
    "diagnosis in the thread shows its pods, events and log; `kubectl -n {ns} describe "
    "deployment kai-operator` for more."
)
_CHECK_SCHEDULER = (
    "Nothing of shard {shard} gets scheduled while it is down: new pods stay Pending. The "
    "diagnosis in the thread shows its pods, events and log; `kubectl -n {ns} describe "
    "deployment {name}` for more. The kai-operator recreates it if it was deleted."
)
_CHECK_PROGRESSING = (
    "The kai-operator logs (`kubectl -n {ns} logs deploy/kai-operator`): it has not updated "
    "these conditions for longer than {timeout}."
)
_CHECK_RECONCILING = (
    "The kai-operator began a pass over this object more than {timeout} ago and has not ended "
    "it (it sets Reconciling False at the end of every pass, even a failed one): is it "
    "running, and is it the leader? `kubectl -n {ns} logs deploy/kai-operator`; until it "
    "ends, the other conditions may be stale."
)
_CHECK_APISERVICE = {
    "MissingEndpoints": "No ready pod backs Service {svc}: are KEDA's metrics-apiserver pods "
    "running and Ready? (`kubectl -n {ns} get pods,endpointslices`)",
    "ServiceNotFound": "Service {svc} does not exist: is KEDA installed in namespace {ns} "
    "under that name? `spec.service` of the APIService says where it should be.",
    "FailedDiscoveryCheck": "kube-apiserver cannot reach Service {svc} or trust its TLS: check "
    "network policies and the metrics server's certificate, and that no other adapter claims "
    "external.metrics.k8s.io.",
}
_CHECK_APISERVICE_OTHER = "`kubectl describe apiservice {name}`, then the pods behind {svc}."
_CHECK_APISERVICE_UNKNOWN = (
    "kube-apiserver's aggregator could not finish its availability check of Service {svc}: "
    "look at the kube-apiserver log and `kubectl describe apiservice {name}`; the diagnosis in "
    "the thread shows the pods behind it."
)
_CHECK_APISERVICE_NO_CONDITION = (
    "kube-apiserver's aggregator writes this condition on every APIService soon after it is "
    "created: if it stays absent, the aggregator's availability checks are not running. Look "
    "at the kube-apiserver log and `kubectl describe apiservice {name}`."
)
_CHECK_APISERVICE_MISSING = (
    "KEDA registers it: upgrade or reinstall KEDA (or sync its GitOps application), and find "
    "out what deleted it."
)
_CHECK_FORBIDDEN = (
    "Grant the bot's service account (or kubeconfig user) the verb and resource the error "
    "names. Until checks succeed no other alert of this cluster fires or resolves."
)
_CHECK_UNREACHABLE = (
    "Is the API server up and reachable from the bot (network, kubeconfig, credentials)? "
    "Until checks succeed no other alert of this cluster fires or resolves."
)


def detect(
    snapshot: ClusterSnapshot,
    report: HealthReport,
    *,
    now: datetime,
    progressing_timeout: timedelta,
    apiservice_name: str,
    command: str,
) -> list[Observation]:
    """Every alert-worthy condition in one snapshot of `report.cluster` (empty when all is well);
    `command` is the configured slash command, named where an alert suggests one."""
    cluster = report.cluster
    found = _config_alerts(cluster, snapshot, report, now, progressing_timeout, command)
    for shard in snapshot.shards:
        found += _progressing_alerts(
            cluster, "SchedulingShard", shard, now, progressing_timeout, snapshot.kai_namespace
        )
    found += _operator_alerts(cluster, snapshot)
    found += _scheduler_alerts(cluster, snapshot)
    found += _apiservice_alerts(cluster, snapshot.apiservice, report, apiservice_name)
    return found


def cannot_check(cluster: str, error: Exception, failures: int) -> Observation:
    """The alert for a cluster whose checks keep failing (fires and resolves without hold)."""
    forbidden = isinstance(error, errors.KubeForbidden)
    return Observation(
        key=AlertKey(cluster, "Cluster", cluster, "Reachable"),
        severity=Severity.CRITICAL,
        title=f"Cannot check cluster {cluster}: {failures} checks in a row failed",
        reason=type(error).__name__,
        message=str(error),
        check_first=_CHECK_FORBIDDEN if forbidden else _CHECK_UNREACHABLE,
        immediate=True,
    )


def _config_alerts(
    cluster: str,
    snapshot: ClusterSnapshot,
    report: HealthReport,
    now: datetime,
    timeout: timedelta,
    command: str,
) -> list[Observation]:
    config = snapshot.kai_config
    name = health.KAI_CONFIG_NAME
    if config is None:
        finding = _finding(report, f"Config {name}")
        return [
            Observation(
                key=AlertKey(cluster, "Config", name, "Missing"),
                severity=Severity.CRITICAL,
                title=f"{name} is missing",
                reason="NotFound",
                message=_without_title(finding.summary if finding else "", f"{name} is missing"),
                check_first=finding.detail if finding else "",
            )
        ]
    deps = conditions.find_condition(conditions.list_conditions(config), DEPENDENCIES)
    if conditions.condition_status(deps) == "False" and conditions.observed_generation(
        deps
    ) == conditions.object_generation(config):
        return [
            Observation(
                key=AlertKey(cluster, "Config", name, DEPENDENCIES),
                severity=Severity.CRITICAL,
                title=kai.assess_kai_object(config).headline,
                reason=conditions.condition_reason(deps),
                message=conditions.condition_message(deps),
                check_first=_CHECK_DEPENDENCIES.format(command=command),
                since=conditions.last_transition(deps),
            )
        ]
    return _progressing_alerts(cluster, "Config", config, now, timeout, snapshot.kai_namespace)


def _progressing_alerts(
    cluster: str, kind: str, obj: RawObject, now: datetime, timeout: timedelta, namespace: str
) -> list[Observation]:
    """A warning when the operator stopped reconciling the object (`kai.find_stall`): its
    conditions Progressing, or a pass reported running, for longer than the timeout."""
    reading = kai.assess_kai_object(obj)
    stall = kai.find_stall(obj, reading, now, timeout)
    if stall is None:
        return []
    check = _CHECK_PROGRESSING if stall.shown_by == "Progressing" else _CHECK_RECONCILING
    return [
        Observation(
            key=AlertKey(cluster, kind, conditions.object_name(obj), stall.shown_by),
            severity=Severity.WARNING,
            title=stall.headline,
            reason=stall.shown_by,
            message=reading.message,
            check_first=check.format(ns=namespace, timeout=format_duration(timeout, "coarse")),
            since=stall.since,
        )
    ]


def _operator_alerts(cluster: str, snapshot: ClusterSnapshot) -> list[Observation]:
    """A warning when the kai-operator Deployment has no available replica (or is missing)."""
    namespace, name = snapshot.kai_namespace, health.OPERATOR_DEPLOYMENT
    operator = deployments.find_deployment(snapshot.deployments, namespace, name)
    check_first = _CHECK_OPERATOR.format(ns=namespace)
    down = _deployment_down(cluster, (namespace, name), operator, Severity.WARNING, check_first)
    return [down] if down else []


def _scheduler_alerts(cluster: str, snapshot: ClusterSnapshot) -> list[Observation]:
    """A critical alert per shard whose scheduler Deployment has no available replica or is
    missing: nothing of that shard gets scheduled. Not while kai-config is missing (its own
    alert says the operator garbage-collected every operand), nor before the shard's first
    scheduler exists (the shard is still Progressing: its own alert covers a stuck operator)."""
    if snapshot.kai_config is None:
        return []
    namespace = health.operand_namespace(snapshot)
    scheduler = health.scheduler_name(snapshot)
    found = []
    for shard in sorted(snapshot.shards, key=conditions.object_name):
        name = health.shard_scheduler(scheduler, shard)
        deployment = deployments.find_deployment(snapshot.deployments, namespace, name)
        if deployment is None and _progressing(shard):
            continue
        shard_name = conditions.object_name(shard)
        check_first = _CHECK_SCHEDULER.format(ns=namespace, name=name, shard=shard_name)
        down = _deployment_down(
            cluster, (namespace, name), deployment, Severity.CRITICAL, check_first, "KAI scheduler "
        )
        found += [down] if down else []
    return found


def _deployment_down(
    cluster: str,
    where: tuple[str, str],
    deployment: RawObject | None,
    severity: Severity,
    check_first: str,
    what: str = "",
) -> Observation | None:
    """The alert of Deployment `where` (namespace, name) with no available replica (or
    missing), or None; its title names it, after `what` it is."""
    down = _down(deployment)
    if down is None:
        return None
    reason, state = down
    namespace, name = where
    return Observation(
        key=AlertKey(cluster, "Deployment", f"{namespace}/{name}", "Available"),
        severity=severity,
        title=f"{what}{name} down: {state}",
        reason=reason,
        message=_deployment_message(deployment),
        check_first=check_first,
    )


def _down(deployment: RawObject | None) -> tuple[str, str] | None:
    """(reason, what is wrong) for a Deployment with no available replica, or None."""
    if deployment is None:
        return "NotFound", "missing"
    if not deployments.has_no_available_replica(deployment):
        return None
    if deployments.desired_replicas(deployment) == 0:
        return "ScaledToZero", "scaled to 0 replicas"
    available = conditions.find_condition(conditions.list_conditions(deployment), "Available")
    return conditions.condition_reason(available) or "Unavailable", "no available replica"


def _deployment_message(deployment: RawObject | None) -> str:
    if deployment is None:
        return ""
    return deployments.assess_deployment(deployment).headline


def _progressing(shard: RawObject) -> bool:
    return kai.assess_kai_object(shard).health is Health.PROGRESSING


def _apiservice_alerts(
    cluster: str, service: RawObject | None, report: HealthReport, name: str
) -> list[Observation]:
    if service is None:
        finding = _finding(report, f"APIService {name}")
        return [
            Observation(
                key=AlertKey(cluster, "APIService", name, "Missing"),
                severity=Severity.CRITICAL,
                title=f"APIService {name} is missing",
                reason="NotFound",
                message=_without_title(
                    finding.summary if finding else "", f"APIService {name} is missing"
                ),
                check_first=_CHECK_APISERVICE_MISSING,
            )
        ]
    available = conditions.find_condition(conditions.list_conditions(service), "Available")
    if conditions.is_condition_true(available):
        return []
    return [
        Observation(
            key=AlertKey(cluster, "APIService", name, "Available"),
            severity=Severity.CRITICAL,
            title=_apiservice_title(service, available),
            reason=conditions.condition_reason(available),
            message=conditions.condition_message(available),
            check_first=_apiservice_hint(service, available, name),
            since=conditions.last_transition(available),
        )
    ]


def _apiservice_title(service: RawObject, available: conditions.Condition | None) -> str:
    """Which way it is not Available: False (the rule's headline: reason and backing Service),
    Unknown (the aggregator's check itself failed), or no condition at all."""
    if available is None:
        return "no Available condition yet"
    state = conditions.condition_status(available)
    if state == "False":
        return apiservice.assess_apiservice(service).headline
    return f"Available is {state or 'unset'}: the aggregator could not check"


def _apiservice_hint(service: RawObject, available: conditions.Condition | None, name: str) -> str:
    spec = conditions.as_mapping(conditions.spec(service).get("service"))
    namespace = conditions.as_text(spec.get("namespace")) or "?"
    backing = f"{namespace}/{conditions.as_text(spec.get('name')) or '?'}"
    if available is None:
        template = _CHECK_APISERVICE_NO_CONDITION
    elif conditions.condition_status(available) != "False":
        template = _CHECK_APISERVICE_UNKNOWN
    else:
        reason = conditions.condition_reason(available)
        template = _CHECK_APISERVICE.get(reason, _CHECK_APISERVICE_OTHER)
    return template.format(svc=backing, ns=namespace, name=name)


def _without_title(summary: str, title: str) -> str:
    """The finding's explanation without the words the alert's title already says."""
    return summary.removeprefix(title).removeprefix(":").strip()


def _finding(report: HealthReport, subject: str) -> Finding | None:
    return next((f for f in report.findings if f.subject == subject), None)
