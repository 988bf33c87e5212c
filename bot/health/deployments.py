"""Availability of the Deployments a KAI health report looks at: operator, operands, schedulers.

Uses KAI's own test (KAI-Scheduler pkg/operator/operands/common/common.go
`isControllerAvailable`): `status.updatedReplicas == spec.replicas` and the `Available` condition
True. For operands and shard schedulers exactly so (not every replica updated: not available);
for other Deployments, Available True while not every replica is updated yet is a rollout in
flight, so Progressing rather than Degraded. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.core import conditions
from bot.core.models import Finding, Health, RawObject

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_OPERATOR = "kai-operator"
APP_LABEL = "app"
# KAI releases whose operator labels its operands only `app=<name>` (KAI-Scheduler v0.13
# pkg/operator/operands/common/common.go `BuildDeploymentSpec`): their operand Deployments by
# name (pkg/operator/operands/{admission,binder,node_scale_adjuster,pod_group_controller,
# pod_grouper,queue_controller}/resources.go); shard schedulers are found by name apart.
APP_LABELLED_OPERANDS = frozenset(
    {
        "admission",
        "binder",
        "node-scale-adjuster",
        "podgroup-controller",
        "pod-grouper",
        "queue-controller",
    }
)


def deployment_subject(namespace: str, name: str) -> str:
    """How a report names a Deployment: `Deployment kai-scheduler/binder`."""
    return f"Deployment {namespace}/{name}"


def find_deployment(
    deployments: Iterable[RawObject], namespace: str, name: str
) -> RawObject | None:
    """The Deployment `namespace/name` among `deployments`, or None."""
    return next(
        (
            d
            for d in deployments
            if conditions.object_name(d) == name and conditions.object_namespace(d) == namespace
        ),
        None,
    )


def list_operands(deployments: Iterable[RawObject], namespace: str) -> list[RawObject]:
    """The Deployments the KAI operator built in `namespace`, either labelling: managed-by=
    kai-operator (newer releases), or `app=<name>` with a name KAI's v0.13 operator gives one."""
    return [d for d in deployments if conditions.object_namespace(d) == namespace and is_operand(d)]


def is_operand(deployment: RawObject) -> bool:
    """Whether the KAI operator built this Deployment, by either release's labels."""
    labels = conditions.labels_of(deployment)
    if labels.get(MANAGED_BY_LABEL) == MANAGED_BY_OPERATOR:
        return True
    name = conditions.object_name(deployment)
    return name in APP_LABELLED_OPERANDS and labels.get(APP_LABEL) == name


def desired_replicas(deployment: RawObject) -> int:
    """`spec.replicas`, which the API defaults to 1."""
    replicas = conditions.as_int(conditions.spec(deployment).get("replicas"))
    return 1 if replicas is None else replicas


def has_no_available_replica(deployment: RawObject) -> bool:
    """`status.availableReplicas` is 0 or absent: nothing of this Deployment serves (scaled to
    0 included). One available replica of several is not this: it still works, degraded."""
    return (conditions.as_int(conditions.status(deployment).get("availableReplicas")) or 0) == 0


def assess_deployment(deployment: RawObject, *, as_kai: bool = False) -> conditions.Assessment:
    """Healthy when available as KAI counts it; Progressing mid-rollout; else Degraded.

    `as_kai` (operands, shard schedulers): KAI's rule alone, so a Deployment whose replicas are
    not all updated is not available (Degraded), as the operator itself reports it."""
    status = conditions.status(deployment)
    replicas = desired_replicas(deployment)
    updated = conditions.as_int(status.get("updatedReplicas")) or 0
    ready = conditions.as_int(status.get("availableReplicas")) or 0
    counts = f"{updated}/{replicas} updated, {ready} available"
    available = conditions.find_condition(conditions.list_conditions(deployment), "Available")
    if not conditions.is_condition_true(available):
        if available is None:
            return conditions.Assessment(
                Health.DEGRADED, f"not available ({counts}): no Available condition"
            )
        reading = conditions.assess_condition(Health.DEGRADED, available)
        return conditions.Assessment(
            Health.DEGRADED, f"not available ({counts}): {reading.headline}", reading.detail
        )
    if updated != replicas and as_kai:
        return conditions.Assessment(
            Health.DEGRADED,
            f"not available ({counts}): KAI counts it available only when every replica is "
            "updated (updatedReplicas == replicas)",
        )
    if updated != replicas or _is_rollout_unobserved(deployment):
        return conditions.Assessment(Health.PROGRESSING, f"rolling out ({counts})")
    return conditions.Assessment(Health.HEALTHY, f"available ({counts})")


def assess_operands(operands: Iterable[RawObject], namespace: str) -> list[Finding]:
    """One Healthy finding naming the available operands, plus one finding per other operand."""
    healthy: list[str] = []
    findings: list[Finding] = []
    for deployment in sorted(operands, key=conditions.object_name):
        reading = assess_deployment(deployment, as_kai=True)
        if reading.health is Health.HEALTHY:
            healthy.append(conditions.object_name(deployment))
            continue
        subject = deployment_subject(namespace, conditions.object_name(deployment))
        findings.append(Finding(subject, reading.health, reading.headline, reading.detail))
    if not healthy and not findings:
        summary = (
            f"none found: no Deployment labelled {MANAGED_BY_LABEL}={MANAGED_BY_OPERATOR}, "
            f"nor {APP_LABEL}=<name> for a KAI operand name"
        )
        return [Finding(f"KAI operands in {namespace}", Health.DEGRADED, summary)]
    if healthy:
        noun = "Deployment" if len(healthy) == 1 else "Deployments"
        summary = f"{len(healthy)} {noun} available: {', '.join(healthy)}"
        findings.insert(0, Finding(f"KAI operands in {namespace}", Health.HEALTHY, summary))
    return findings


def _is_rollout_unobserved(deployment: RawObject) -> bool:
    """The Deployment controller has not yet seen the latest spec (its status is older)."""
    generation = conditions.object_generation(deployment)
    observed = conditions.as_int(conditions.status(deployment).get("observedGeneration"))
    return generation is not None and observed is not None and observed < generation
