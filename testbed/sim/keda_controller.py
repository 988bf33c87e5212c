"""A simulated KEDA operator's answer to the pause annotations, held to KEDA v2.21.0's own
(tests/cluster/test_upstream_differential.py runs the same writes against the real operator).

KEDA reads `autoscaling.keda.sh/paused` with Go's ParseBool (a value that does not parse
pauses); on a ScaledObject `autoscaling.keda.sh/paused-replicas` pauses whatever `paused` says
and a one-direction pause sets `Paused` True too (kedacore/keda controllers/keda/
scaledobject_controller.go `reconcileScaledObject`, scaledjob_controller.go `checkIfPaused`).
What it writes, as that code does: `Paused` True/False with its reason and message (KEDA's
conditions carry no `lastTransitionTime`), `Ready`'s message, a ScaledObject's
`status.pausedReplicaCount`, and a Normal Event through the events.k8s.io recorder
(`reportingController` keda-operator). Resuming a ScaledJob restarts its scale loop, whose first
tick writes the conditions of the copy it read before the resume (kedacore/keda#5251): `Paused`
reads True again. Used by the demo, the e2e tier with `keda_controller`, and
`testbed.apicontrollers`.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from testbed.sim.objects import event_start

GROUP = "keda.sh"
TYPES = ((GROUP, "v1alpha1", "scaledjobs"), (GROUP, "v1alpha1", "scaledobjects"))
PAUSED = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
ONE_DIRECTION = ("autoscaling.keda.sh/paused-scale-in", "autoscaling.keda.sh/paused-scale-out")
PAUSE_KEYS = (PAUSED, PAUSED_REPLICAS, *ONE_DIRECTION)
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
COMPONENT = "keda-operator"
# apis/keda/v1alpha1/condition_types.go and the controllers' literals.
_PAUSED = {
    "ScaledJob": ("ScaledJobPaused", "ScaledJob is paused"),
    "ScaledObject": ("ScaledObjectPaused", "ScaledObject is paused"),
}
_UNPAUSED = {
    "ScaledJob": ("ScaledJobUnpaused", "ScaledJob is unpaused"),
    "ScaledObject": ("ScaledObjectUnpaused", "pause annotation removed for ScaledObject"),
}
# Ready's message while paused (the reconcile's own result), and once scaling again.
_READY_PAUSED = {
    "ScaledJob": "ScaledJob is paused, skipping reconcile loop",
    "ScaledObject": "ScaledObject is paused",
}
_READY_RESUMED = {
    "ScaledJob": "ScaledJob is defined correctly and is ready to scaling",
    "ScaledObject": "ScaledObject is defined correctly and is ready for scaling",
}
_READY_SCALE_LOOP = "ScaledJob is defined correctly and is ready for scaling"  # scale_jobs.go


def wants_paused(obj: dict[str, Any]) -> bool:
    """Whether KEDA would set `Paused` True, from the annotations alone: a full pause, or on a
    ScaledObject a one-direction pause (autoscaling goes on, the condition still says Paused)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    object_pause = PAUSED_REPLICAS in annotations or any(
        _is_set(annotations, k) for k in ONE_DIRECTION
    )
    if obj.get("kind") == "ScaledObject" and object_pause:
        return True
    return _is_set(annotations, PAUSED)


def is_full_pause(obj: dict[str, Any]) -> bool:
    """Paused both ways: `paused`, or on a ScaledObject `paused-replicas` (KEDA stops the scale
    loop then; a one-direction pause keeps it running and Ready's message as it was)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if obj.get("kind") == "ScaledObject" and PAUSED_REPLICAS in annotations:
        return True
    return _is_set(annotations, PAUSED)


def _is_set(annotations: dict[str, Any], key: str) -> bool:
    return key in annotations and str(annotations[key]) not in _FALSE


def pause_annotations(obj: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The annotations KEDA reconciles on (its predicates): a change of these is a reconcile."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return tuple((k, str(annotations[k])) for k in PAUSE_KEYS if k in annotations)


@dataclass(frozen=True)
class Reconciled:
    """What one reconcile of the pause annotations writes: status patches in order, and the
    reason and message of the Event it records (None: no Event)."""

    patches: tuple[dict[str, Any], ...] = ()
    event: tuple[str, str] | None = None


def paused_status_patch(obj: dict[str, Any], now: Any) -> dict[str, Any] | None:
    """The first status patch KEDA's reconcile makes for the object's annotations; None when
    its `Paused` condition already follows them."""
    patches = reconcile(obj).patches
    return patches[0] if patches else None


def reconcile(obj: dict[str, Any]) -> Reconciled:
    """What KEDA writes when it reconciles the object's pause annotations (nothing when its
    `Paused` condition already says what they ask)."""
    kind = str(obj.get("kind", "ScaledJob"))
    status = obj.get("status") or {}
    conditions = [dict(c) for c in status.get("conditions") or []]
    current = next((c for c in conditions if c.get("type") == "Paused"), None)
    paused = wants_paused(obj)
    if current is None and not paused:  # KEDA's initialized conditions: Paused False
        initial = [*conditions, {"type": "Paused", "status": "False"}]
        return Reconciled(({"status": {"conditions": initial}},))
    if current is not None and (current.get("status") == "True") == paused:
        return Reconciled()
    reason, message = (_PAUSED if paused else _UNPAUSED)[kind]
    ready: str | None = _READY_PAUSED[kind] if paused else _READY_RESUMED[kind]
    if paused and not is_full_pause(obj):
        ready = None
    first = _with(conditions, "True" if paused else "False", reason, message, ready)
    patch: dict[str, Any] = {"status": {"conditions": first}}
    if kind == "ScaledObject":
        patch["status"]["pausedReplicaCount"] = paused_replicas(obj)
    if paused or kind != "ScaledJob":
        return Reconciled((patch,), (reason, message))
    # The restarted scale loop's first tick, from the copy it read before the resume.
    stale_reason, stale_message = _PAUSED[kind]
    stale = _with(conditions, "True", stale_reason, stale_message, _READY_SCALE_LOOP)
    return Reconciled((patch, {"status": {"conditions": stale}}), (reason, message))


def paused_replicas(obj: dict[str, Any]) -> int | None:
    """`status.pausedReplicaCount`: the `paused-replicas` annotation as a number, or None."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    try:
        return int(annotations[PAUSED_REPLICAS])
    except (KeyError, ValueError):
        return None


def _with(
    conditions: list[dict[str, Any]], paused: str, reason: str, message: str, ready: str | None
) -> list[dict[str, Any]]:
    """The conditions with `Paused` set and a True `Ready`'s message replaced unless `ready` is
    None (KEDA's `SetCondition`: the entry changes in place, others keep their order)."""
    out = []
    for condition in conditions:
        if condition.get("type") == "Paused":
            condition = {"type": "Paused", "status": paused, "reason": reason, "message": message}
        elif ready and condition.get("type") == "Ready" and condition.get("status") == "True":
            condition = {**condition, "message": ready}
        out.append(condition)
    if not any(c.get("type") == "Paused" for c in out):
        out.append({"type": "Paused", "status": paused, "reason": reason, "message": message})
    return out


def pause_event(obj: dict[str, Any], reason: str, message: str, now: datetime) -> dict[str, Any]:
    """The Event KEDA records for a pause or a resume, as client-go's events.k8s.io recorder
    writes it, read back as a core/v1 Event (an `eventTime`, no `source`, no count)."""
    return {
        **event_start({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledJob", **obj}, now),
        "reason": reason,
        "message": message,
        "action": message,
        "type": "Normal",
        "eventTime": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "source": {},
        "reportingComponent": COMPONENT,
        "reportingInstance": f"{COMPONENT}-{socket.gethostname()}",
    }
