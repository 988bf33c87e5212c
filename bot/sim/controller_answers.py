"""What the simulated Flux and Argo CD controllers write back: pure status builders.

`Behaviour` (read from an object's `sim.kai-chatops/...` annotation) says whether a request
succeeds, fails or is never answered, and how long it takes; the functions here build the status
a real controller would leave. No store, no clock: `bot.sim.controllers` does the writing.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal

_SLOW = re.compile(r"slow:(\d+(?:\.\d+)?)(ms|s)")
Mode = Literal["succeed", "fail", "never"]
_MODES: dict[str, Mode] = {"succeed": "succeed", "fail": "fail", "never": "never"}


@dataclass(frozen=True)
class Behaviour:
    """What a simulated controller does with one request."""

    mode: Mode = "succeed"
    delay: float = 0.0  # seconds spent reconciling before the result
    message: str = ""  # the failure message; empty: a realistic default


def parse_behaviour(value: str, default: Behaviour) -> Behaviour:
    """Read an annotation value (`succeed`, `fail[:MESSAGE]`, `slow:2s`, `never`); else default."""
    text = value.strip()
    if text in _MODES:
        return Behaviour(_MODES[text], default.delay)
    if text.startswith("fail:"):
        return Behaviour("fail", default.delay, text.removeprefix("fail:").strip())
    slow = _SLOW.fullmatch(text)
    if slow:
        amount = float(slow.group(1)) / (1000 if slow.group(2) == "ms" else 1)
        return Behaviour("succeed", amount)
    return default


_FAILURES = {
    "HelmRelease": ("UpgradeFailed", "Helm upgrade failed: context deadline exceeded"),
    "Kustomization": (
        "ReconciliationFailed",
        "kustomize build failed: accumulating resources: 'clusters/prod/missing' not found",
    ),
}
_SOURCE_FAILURE = ("FetchFailed", "failed to fetch artifact: connection refused")


def flux_outcome(
    kind: str, obj: dict[str, Any], token: str, behaviour: Behaviour
) -> dict[str, Any]:
    """The status a Flux controller leaves: request handled, generation observed, Ready set."""
    status = obj.get("status") or {}
    keep = [
        c for c in status.get("conditions") or [] if c.get("type") not in ("Reconciling", "Stalled")
    ]
    generation = (obj.get("metadata") or {}).get("generation", 1)
    if behaviour.mode == "fail":
        reason, message = _FAILURES.get(kind, _SOURCE_FAILURE)
        ready = {"status": "False", "reason": reason, "message": behaviour.message or message}
    else:
        ready = _ready_success(kind, keep, status)
    conditions = _set_condition(keep, "Ready", ready, generation)
    if kind == "HelmRelease":
        conditions = _set_condition(conditions, "Released", ready, generation)
    return {
        "lastHandledReconcileAt": token,
        "observedGeneration": generation,
        "conditions": conditions,
    }


def _ready_success(
    kind: str, conditions: list[dict[str, Any]], status: dict[str, Any]
) -> dict[str, Any]:
    previous = next((c for c in conditions if c.get("type") == "Ready"), None)
    if previous is not None and previous.get("status") == "True":
        return {k: previous[k] for k in ("status", "reason", "message") if k in previous}
    revision = status.get("lastAppliedRevision") or (status.get("artifact") or {}).get(
        "revision", ""
    )
    if kind == "HelmRelease":
        return {"status": "True", "reason": "UpgradeSucceeded", "message": "Helm upgrade succeeded"}
    if kind == "Kustomization":
        message = f"Applied revision: {revision}"
        return {"status": "True", "reason": "ReconciliationSucceeded", "message": message}
    return {
        "status": "True",
        "reason": "Succeeded",
        "message": f"stored artifact for revision '{revision}'",
    }


def progressing(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Conditions while a reconcile runs: Reconciling True, Ready Unknown."""
    generation = (obj.get("metadata") or {}).get("generation", 1)
    conditions = list((obj.get("status") or {}).get("conditions") or [])
    busy = {"status": "True", "reason": "Progressing", "message": "reconciliation in progress"}
    conditions = _set_condition(conditions, "Reconciling", busy, generation)
    waiting = {
        "status": "Unknown",
        "reason": "Progressing",
        "message": "reconciliation in progress",
    }
    return _set_condition(conditions, "Ready", waiting, generation)


def _set_condition(
    conditions: list[dict[str, Any]], type_: str, fields: dict[str, Any], generation: int
) -> list[dict[str, Any]]:
    entry = {"type": type_, **fields, "observedGeneration": generation}
    others = [copy.deepcopy(c) for c in conditions if c.get("type") != type_]
    return [entry, *others] if type_ == "Ready" else [*others, entry]


def sync_outcome(
    app: dict[str, Any], running: dict[str, Any], behaviour: Behaviour, finished: str
) -> list[dict[str, Any]]:
    """Argo CD's end of an operation: `operation` removed, `operationState` replaced whole."""
    source = (app.get("spec") or {}).get("source") or {}
    revision = str(source.get("targetRevision") or "HEAD")
    result = {"revision": revision, "source": source}
    state = {**running, "finishedAt": finished, "syncResult": result}
    fields: dict[str, Any] = {"operationState": state}
    if behaviour.mode == "fail":
        state.update(phase="Failed", message=behaviour.message or _SYNC_FAILURE)
    else:
        state.update(phase="Succeeded", message="successfully synced (all tasks run)")
        synced = {**((app.get("status") or {}).get("sync") or {}), "status": "Synced"}
        fields.update(sync={**synced, "revision": revision}, reconciledAt=finished)
    return [{"op": "remove", "path": "/operation"}, *replace_status(app, fields)]


_SYNC_FAILURE = "one or more objects failed to apply, reason: admission webhook denied the request"


def replace_status(obj: dict[str, Any], fields: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON patch operations setting whole `status` fields, as Argo CD's controller does."""
    if not isinstance(obj.get("status"), dict):
        return [{"op": "add", "path": "/status", "value": fields}]
    return [
        {"op": "add", "path": f"/status/{key}", "value": value} for key, value in fields.items()
    ]
