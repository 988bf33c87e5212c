"""The KAI operator's status, as each release writes it on `kai-config` and its SchedulingShards.

An imitation of pkg/operator/controller/status_reconciler/status_reconciler.go and
pkg/operator/operands/deployable/deployable.go (KAI-Scheduler, at each release's tag in
`testbed.sim.kai_releases`), computed from the operand workloads that exist: it writes
conditions, it does not create operands (scenarios and actions play `Deploy` and Kubernetes'
own controllers). Per pass:
- start (`UpdateStartReconcileStatus`): `Reconciling` True, then `Deployed`. v0.12.0 writes it
  True with the words of a finished pass and leaves it so; from v0.13.0 (#1060) it is True
  "Reconciliation in progress", at every pass on v0.13, once a generation from v0.14 (#1229:
  v0.13's own status writes started another pass, a loop `testbed.sim.controllers` leaves out);
- end (`ReconcileStatus`): `Deployed`, `Available`, `DependenciesFulfilled`, then from v0.13.0
  `Ready` (a copy of `Available`) and `Reconciling` False.
A condition is replaced only when its observedGeneration, status or message differ, stamped
with the time of the write (`reconcileCondition`); reasons never change with the status
(`deployed`, `available`). Operands of a Config, in the operator's order
(config_controller.go `ConfigReconcilerOperands`): PodGrouper, Binder, QueueController,
PodGroupController, NodeScaleAdjuster, KAIAdmission, KAI-prometheus (dependencies only),
NumaPlacementExporter (v0.16.0+, a DaemonSet: on when enabled, or unset and some shard enables
the `numa` plugin); a shard's: SchedulerForShard, Deployment `<schedulerName>-<shard>`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from testbed.sim.kai_releases import KaiRelease
from testbed.sim.objects import timestamp

Conditions = list[dict[str, Any]]
Workloads = Mapping[tuple[str, str], dict[str, Any]]  # (kind, name) -> the workload
DEPLOYED = ("Resources deployed", "deployed")
AVAILABLE = ("System available", "available")
FULFILLED = "Dependencies are fulfilled"
MISSING_PROMETHEUS = "\nKAI-prometheus is missing prometheus operator"
PROMETHEUS_CRD = ("monitoring.coreos.com", "v1", "prometheuses")
_RESOURCES = {"Deployment": "deployments.apps", "DaemonSet": "daemonsets.apps"}


@dataclass(frozen=True)
class Operand:
    """One workload an operand wants: its operand name (as messages say it), kind and name."""

    label: str
    kind: str
    name: str


# (operand, its section of kai-config's spec, its workload, on unless the spec says otherwise)
_CONFIG_OPERANDS = (
    ("PodGrouper", "podGrouper", "pod-grouper", True),
    ("Binder", "binder", "binder", True),
    ("QueueController", "queueController", "queue-controller", True),
    ("PodGroupController", "podGroupController", "podgroup-controller", True),
    ("NodeScaleAdjuster", "nodeScaleAdjuster", "node-scale-adjuster", False),
    ("KAIAdmission", "admission", "admission", True),
)


def config_operands(
    kai: KaiRelease, config: Mapping[str, Any], shards: Sequence[Mapping[str, Any]]
) -> list[Operand]:
    """The workloads kai-config's operands want, in the operator's order."""
    spec = config.get("spec") or {}
    wanted = [
        Operand(label, "Deployment", name)
        for label, section, name, default in _CONFIG_OPERANDS
        if _enabled(spec.get(section), default)
    ]
    if kai.numa_exporter and _exporter_enabled(spec, shards):
        wanted.append(Operand("NumaPlacementExporter", "DaemonSet", "numa-placement-exporter"))
    return wanted


def shard_operands(config: Mapping[str, Any] | None, shard: Mapping[str, Any]) -> list[Operand]:
    """A shard's scheduler (none while kai-config is missing: its desired state is empty)."""
    if config is None:
        return []
    spec = config.get("spec") or {}
    scheduler = (spec.get("global") or {}).get("schedulerName") or "kai-scheduler"
    name = f"{scheduler}-{shard['metadata']['name']}"
    return [Operand("SchedulerForShard", "Deployment", name)]


def computed(
    kai: KaiRelease,
    obj: Mapping[str, Any],
    wanted: Sequence[Operand],
    workloads: Workloads,
    missing_dependencies: str,
) -> Conditions:
    """The conditions the end of a pass writes, in order, without their times."""
    generation = int(obj["metadata"].get("generation") or 1)
    deployed = _joined(
        f"{o.label}: not deployed" for o in wanted if (o.kind, o.name) not in workloads
    )
    unavailable = _joined(line for o in wanted for line in _unavailable(o, workloads))
    found = [
        _condition("Deployed", deployed, DEPLOYED, generation),
        _condition("Available", unavailable, AVAILABLE, generation),
        _dependencies(missing_dependencies, generation),
    ]
    if kai.ready:
        ready = _condition("Ready", unavailable, ("System is ready", "ready"), generation)
        if unavailable:
            ready.update(reason="not_ready", message="System not ready")
        found += [ready, _reconciling(False, generation)]
    return found


def started(kai: KaiRelease, obj: Mapping[str, Any]) -> Conditions:
    """What the start of a pass writes first: `Reconciling` True (from v0.14 only at a new
    generation: none when the object already has one for its generation)."""
    generation = int(obj["metadata"].get("generation") or 1)
    if not kai.ready:
        return [_reconciling(True, generation, finished_words=True)]
    old = _find(_conditions_of(obj), "Reconciling")
    if not kai.marks_every_pass and old is not None and old.get("observedGeneration") == generation:
        return []
    return [_reconciling(True, generation)]


def merged(old: Conditions, written: Conditions, now: datetime) -> Conditions:
    """`old` with each of `written` put in as `reconcileCondition` does: replaced only when its
    observedGeneration, status or message differ (stamped `now`), appended when new."""
    result = [dict(c) for c in old]
    for condition in written:
        same = _find(result, condition["type"])
        fields = ("observedGeneration", "status", "message")
        if same is not None and all(same.get(f) == condition.get(f) for f in fields):
            continue
        stamped = {**condition, "lastTransitionTime": timestamp(now)}
        if same is None:
            result.append(stamped)
        else:
            result[result.index(same)] = stamped
    return result


def _enabled(section: Any, default: bool) -> bool:
    service = (section or {}).get("service") or {} if isinstance(section, dict) else {}
    enabled = service.get("enabled")
    return default if enabled is None else bool(enabled)


def _exporter_enabled(spec: Mapping[str, Any], shards: Sequence[Mapping[str, Any]]) -> bool:
    """An explicit `service.enabled` wins; unset, on when a shard enables the `numa` plugin
    (numa_placement_exporter.go `shouldDeploy`)."""
    service = (spec.get("numaPlacementExporter") or {}).get("service") or {}
    if service.get("enabled") is not None:
        return bool(service["enabled"])
    plugins = [((s.get("spec") or {}).get("plugins") or {}).get("numa") or {} for s in shards]
    return any(p.get("enabled") is True for p in plugins)


def _unavailable(operand: Operand, workloads: Workloads) -> list[str]:
    """`AllControllersAvailable`'s words for one operand (common.go), as deployable joins them."""
    workload = workloads.get((operand.kind, operand.name))
    if workload is None:
        said = f'{_RESOURCES[operand.kind]} "{operand.name}" not found'
    elif _is_available(operand.kind, workload):
        return []
    else:
        said = f"{operand.kind} [{operand.name}] is not available"
    return [f"{operand.label}: {said}", f"{operand.label}: not available"]


def _is_available(kind: str, workload: Mapping[str, Any]) -> bool:
    """`isControllerAvailable`: a Deployment with every replica updated and Available True; a
    DaemonSet with as many available pods as it should schedule."""
    status = workload.get("status") or {}
    if kind == "DaemonSet":
        return bool(status.get("desiredNumberScheduled", 0) == status.get("numberAvailable", 0))
    replicas = (workload.get("spec") or {}).get("replicas", 1)
    available = _find(status.get("conditions") or [], "Available") or {}
    return bool(status.get("updatedReplicas", 0) == replicas and available.get("status") == "True")


def _dependencies(missing: str, generation: int) -> dict[str, Any]:
    if not missing:
        return _written(
            "DependenciesFulfilled", "True", "dependencies_fulfilled", FULFILLED, generation
        )
    return _written("DependenciesFulfilled", "False", "dependencies_missing", missing, generation)


def _condition(
    type_: str, problems: str, healthy: tuple[str, str], generation: int
) -> dict[str, Any]:
    message, reason = healthy
    if problems:
        return _written(type_, "False", reason, problems, generation)
    return _written(type_, "True", reason, message, generation)


def _reconciling(running: bool, generation: int, *, finished_words: bool = False) -> dict[str, Any]:
    if running and not finished_words:
        return _written(
            "Reconciling", "True", "reconciling", "Reconciliation in progress", generation
        )
    status = "True" if running else "False"
    done = "Reconciliation completed successfully"
    return _written("Reconciling", status, "reconciled", done, generation)


def _written(type_: str, status: str, reason: str, message: str, generation: int) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def _joined(lines: Any) -> str:
    return "\n".join(lines)


def _conditions_of(obj: Mapping[str, Any]) -> Conditions:
    return list((obj.get("status") or {}).get("conditions") or [])


def _find(conditions: Sequence[dict[str, Any]], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == type_), None)
