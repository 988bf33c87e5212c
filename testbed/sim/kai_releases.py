"""The KAI Scheduler releases the imitation plays, each read from KAI's source at its tag
(github.com/kai-scheduler/KAI-Scheduler), and the scenarios' KAI objects reshaped to match.

The packaged scenarios are a default v0.17.0 install (their header says so); `reshape` turns
their KAI objects into what an older release's operator leaves:
- v0.12 (v0.12.0): no `Ready` condition and `Reconciling` True for good, reason `reconciled`
  (pkg/operator/controller/status_reconciler/status_reconciler.go `getReconcilingCondition`);
  operands labelled `app=<name>` only (pkg/operator/operands/common/common.go
  `ObjectForKAIConfig`); a PodGroup whose queue does not exist skipped in silence
  (pkg/scheduler/cache/cluster_info/cluster_info.go `snapshotPodGroups`).
- v0.13 (v0.13.0): `Ready` mirrors `Available`, `Reconciling` True only while a pass runs
  (#1060, same file), set at the start of every pass (once a generation from v0.14, #1229);
  reason `QueueDoesNotExist` (cluster_info.go `validatePodgroupQueue`);
  operands still `app=<name>` only. From v0.13.1 the Go module is
  github.com/kai-scheduler/KAI-scheduler (go.mod; v0.12.x keeps github.com/NVIDIA/KAI-scheduler).
- v0.16 (v0.16.8): the NUMA placement exporter DaemonSet operand (v0.16.0,
  pkg/operator/operands/numa_placement_exporter/), the managed-by label on operand Deployments
  (v0.16.1, #1779), Succeeded pods left out of the scheduler's cache (v0.16.2, #1778), so
  `stalegangeviction` evicts the rest of a gang whose pods finish one by one (#1968).
- v0.17 (v0.17.0): PodGroup `status.phase` and pod counts gone from the schema (#1650),
  `spec.preemptionDelay` and `PreemptionDelayNotElapsed` (#1832, pkg/scheduler/actions/utils/
  input_jobs.go), `kai.scheduler/last-eviction-timestamp` stamped on an evicted PodGroup
  (pkg/scheduler/cache/status_updater/default_status_updater.go), scheduling conditions cleared
  once a group runs; still #1968 (fixed by #2012, in no release yet).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MANAGED_BY = "app.kubernetes.io/managed-by"


@dataclass(frozen=True)
class KaiRelease:
    """What one KAI release's operator and scheduler write, as the imitation plays it."""

    name: str  # v0.12, v0.13, v0.16, v0.17
    tag: str  # the tag whose source it follows
    module: str  # its Go module path
    ready: bool  # writes `Ready`; `Reconciling` True only while a pass runs (#1060)
    marks_every_pass: bool  # `Reconciling` True at every pass's start, not once a generation
    managed_by_label: bool  # operand Deployments labelled managed-by=kai-operator (#1779)
    numa_exporter: bool  # the NUMA placement exporter DaemonSet operand
    queue_does_not_exist: bool  # says `QueueDoesNotExist` rather than nothing
    preemption_delay: bool  # spec.preemptionDelay, its reason, last-eviction-timestamp (#1832)
    clears_conditions: bool  # a group that runs loses its scheduling conditions
    evicts_completing_gangs: bool  # stalegangeviction of a gang whose pods finish (#1968)


_NVIDIA = "github.com/NVIDIA/KAI-scheduler"
_KAI = "github.com/kai-scheduler/KAI-scheduler"
_ORDER = ("v0.12", "v0.13", "v0.16", "v0.17")
# Each behaviour: the first imitated release that has it, and the first that no longer does.
_SPANS = {
    "ready": ("v0.13", None),
    "marks_every_pass": ("v0.12", "v0.16"),
    "managed_by_label": ("v0.16", None),
    "numa_exporter": ("v0.16", None),
    "queue_does_not_exist": ("v0.13", None),
    "preemption_delay": ("v0.17", None),
    "clears_conditions": ("v0.17", None),
    "evicts_completing_gangs": ("v0.16", None),
}


def _release(name: str, tag: str, module: str) -> KaiRelease:
    at = _ORDER.index(name)
    has = {
        feature: _ORDER.index(first) <= at and (last is None or at < _ORDER.index(last))
        for feature, (first, last) in _SPANS.items()
    }
    return KaiRelease(name=name, tag=tag, module=module, **has)


RELEASES = {
    r.name: r
    for r in (
        _release("v0.12", "v0.12.0", _NVIDIA),
        _release("v0.13", "v0.13.0", _NVIDIA),
        _release("v0.16", "v0.16.8", _KAI),
        _release("v0.17", "v0.17.0", _KAI),
    )
}
SCENARIOS_RELEASE = "v0.17"  # what the packaged scenarios are


def release(name: str | None) -> KaiRelease:
    """The release called `name` (None: the scenarios' own, v0.17).

    Raises:
        ValueError: a release the imitation does not play.
    """
    found = RELEASES.get(name or SCENARIOS_RELEASE)
    if found is None:
        raise ValueError(f"KAI release {name!r} is not imitated: one of {', '.join(RELEASES)}")
    return found


def reshape(documents: Iterable[dict[str, Any]], kai: KaiRelease) -> list[dict[str, Any]]:
    """The scenario `documents` (a v0.17.0 install) as `kai`'s install would have them."""
    return [_reshaped(doc, kai) for doc in documents]


def _reshaped(doc: dict[str, Any], kai: KaiRelease) -> dict[str, Any]:
    if kai.name == SCENARIOS_RELEASE:
        return doc
    doc = copy.deepcopy(doc)
    kind = doc.get("kind")
    if kind in ("Config", "SchedulingShard") and not kai.ready:
        _without_ready(doc)
    if kind == "Deployment" and not kai.managed_by_label:
        _without_managed_by(doc)
    _retagged(doc, kai.tag)
    return doc


def _without_ready(doc: dict[str, Any]) -> None:
    """v0.12.0's conditions: no `Ready`, `Reconciling` True with the words of a finished pass."""
    conditions = (doc.get("status") or {}).get("conditions") or []
    kept = [c for c in conditions if c.get("type") != "Ready"]
    for condition in kept:
        if condition.get("type") == "Reconciling":
            condition.update(
                status="True", reason="reconciled", message="Reconciliation completed successfully"
            )
    if conditions:
        doc["status"]["conditions"] = kept


def _without_managed_by(doc: dict[str, Any]) -> None:
    labels = (doc.get("metadata") or {}).get("labels") or {}
    if labels.get(MANAGED_BY) != "kai-operator":
        return
    del labels[MANAGED_BY]
    template = ((doc.get("spec") or {}).get("template") or {}).get("metadata") or {}
    (template.get("labels") or {}).pop(MANAGED_BY, None)


def _retagged(value: Any, tag: str) -> Any:
    """Every image of the scenarios' release (`...:v0.17.0`, `tag: v0.17.0`) at `tag`."""
    scenarios_tag = RELEASES[SCENARIOS_RELEASE].tag
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("image", "tag") and isinstance(item, str):
                value[key] = item.replace(scenarios_tag, tag)
            else:
                _retagged(item, tag)
    elif isinstance(value, list):
        for item in value:
            _retagged(item, tag)
    return value
