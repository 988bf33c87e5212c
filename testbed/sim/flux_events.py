"""The Kubernetes Events the simulated Flux controllers record after a reconcile, as Flux v1.9.6
records them (fluxcd/pkg runtime/events via client-go's recorder: `source.component` and
`reportingComponent` the controller, annotations `<group>/revision`).

kustomize-controller: Normal `ReconciliationSucceeded` "Reconciliation finished in D, next run in
I" (and `commit_status: update`), or a Warning with Ready's reason and message (internal/
controller/kustomization_controller.go `Reconcile`); source-controller, a GitRepository whose
revision did not move: Normal `GitOperationSucceeded` "no changes since last reconciliation:
observed revision 'R'". Others record nothing here. Pure: the caller creates the Event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from testbed.sim.controller_answers import go_duration
from testbed.sim.objects import event_start

KUSTOMIZE = "kustomize.toolkit.fluxcd.io"


def flux_event(kind: str, obj: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """The Event recorded for the object as its reconcile left it (its status written), or
    None."""
    ready = next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"),
        None,
    )
    if ready is None:
        return None
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    if kind == "Kustomization":
        revision = str(status.get("lastAttemptedRevision") or status.get("lastAppliedRevision"))
        notes = {f"{KUSTOMIZE}/revision": revision}
        if ready.get("status") != "True":
            message = str(ready.get("message", ""))
            reason = str(ready.get("reason", ""))
            return _event(obj, ("kustomize-controller", "Warning", reason), message, notes, now)
        interval = go_duration(str(spec.get("interval") or "10m"))
        message = f"Reconciliation finished in 1ms, next run in {interval}"
        notes[f"{KUSTOMIZE}/commit_status"] = "update"
        done = ("kustomize-controller", "Normal", "ReconciliationSucceeded")
        return _event(obj, done, message, notes, now)
    if kind == "GitRepository" and ready.get("status") == "True":
        revision = (status.get("artifact") or {}).get("revision", "")
        message = f"no changes since last reconciliation: observed revision '{revision}'"
        fetched = ("source-controller", "Normal", "GitOperationSucceeded")
        return _event(obj, fetched, message, {}, now)
    return None


def _event(
    obj: dict[str, Any],
    what: tuple[str, str, str],
    message: str,
    annotations: dict[str, str],
    when: datetime,
) -> dict[str, Any]:
    """`what`: (the recording controller, the Event's type, its reason)."""
    component, type_, reason = what
    at = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = event_start(obj, when)
    if annotations:
        event["metadata"]["annotations"] = annotations
    return {
        **event,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": 1,
        "firstTimestamp": at,
        "lastTimestamp": at,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": "",
    }
