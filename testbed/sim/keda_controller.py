"""A simulated KEDA operator's answer to the pause annotations: the `Paused` condition.

KEDA v2.13+ reads `autoscaling.keda.sh/paused` with Go's ParseBool (a value that does not parse
pauses) and, on a ScaledObject, `autoscaling.keda.sh/paused-replicas` pauses whatever `paused`
says; it then writes `Paused` True/False (reference: keda-flux-argocd.md §1.3). Used by the demo.
"""

from __future__ import annotations

from typing import Any

from testbed.sim.objects import timestamp

GROUP = "keda.sh"
TYPES = ((GROUP, "v1alpha1", "scaledjobs"), (GROUP, "v1alpha1", "scaledobjects"))
PAUSED = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"
ONE_DIRECTION = ("autoscaling.keda.sh/paused-scale-in", "autoscaling.keda.sh/paused-scale-out")
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def wants_paused(obj: dict[str, Any]) -> bool:
    """Whether KEDA would set `Paused` True, from the annotations alone: a full pause, or on a
    ScaledObject a one-direction pause (kedacore/keda controllers/keda/scaledobject_controller.go
    `reconcileScaledObject`: autoscaling goes on, the condition still says Paused)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    object_pause = PAUSED_REPLICAS in annotations or any(
        _is_set(annotations, k) for k in ONE_DIRECTION
    )
    if obj.get("kind") == "ScaledObject" and object_pause:
        return True
    return _is_set(annotations, PAUSED)


def _is_set(annotations: dict[str, Any], key: str) -> bool:
    return key in annotations and str(annotations[key]) not in _FALSE


def paused_status_patch(obj: dict[str, Any], now: Any) -> dict[str, Any] | None:
    """The status patch that makes `Paused` follow the annotations; None when it already does."""
    paused = wants_paused(obj)
    kind = str(obj.get("kind", "ScaledJob"))
    conditions = list((obj.get("status") or {}).get("conditions") or [])
    current = next((c for c in conditions if c.get("type") == "Paused"), None)
    if current is not None and (current.get("status") == "True") == paused:
        return None
    condition = {
        "type": "Paused",
        "status": "True" if paused else "False",
        "reason": f"{kind}Paused" if paused else f"{kind}Unpaused",
        "message": f"{kind} is paused" if paused else f"{kind} is unpaused",
        "lastTransitionTime": timestamp(now),
    }
    others = [c for c in conditions if c.get("type") != "Paused"]
    return {"status": {"conditions": [*others, condition]}}
