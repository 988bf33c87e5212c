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
from bot.core.models import Health, RawObject


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


def _is_rollout_unobserved(deployment: RawObject) -> bool:
    """The Deployment controller has not yet seen the latest spec (its status is older)."""
    generation = conditions.object_generation(deployment)
    observed = conditions.as_int(conditions.status(deployment).get("observedGeneration"))
    return generation is not None and observed is not None and observed < generation
