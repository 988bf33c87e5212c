"""What a GPU node says about its GPUs: capacity, allocatable, allocated, Ready, its GPU
conditions, and our cordon record (docs/design.md §2 "GPU nodes").

Pure. NVIDIA's device plugin advertises every GPU in `status.capacity["nvidia.com/gpu"]` and only
the healthy ones in `status.allocatable` (a GPU it marks unhealthy after an XID error leaves the
node at 7 of 8: NVIDIA/gpu-operator issue 1065; "Allocatable: Number of GPUs in a Healthy state",
NVIDIA/k8s-device-plugin issue 58). NVIDIA's health tools write node conditions: NVSentinel's
platform connectors set `GpuMemWatch`, `GpuNvlinkWatch`, ..., `SysLogsXIDError`,
`SysLogsGPUFallenOff`, `NVSwitchFatalError`, `DCGMError` True on a fault and False when healthy
(its integration guide, "Condition Status": NVIDIA/NVSentinel, docs INTEGRATIONS), the way
node-problem-detector's conditions read; a type named for health (`GpuHealthy`) reads the other
way round. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from bot.core import conditions as c
from bot.core.models import RawObject

GPU = "nvidia.com/gpu"
CORDONED_BY = "kai-chatops/cordoned-by"
CORDONED_AT = "kai-chatops/cordoned-at"
CORDON_REASON = "kai-chatops/cordon-reason"
CORDON_UNTIL = "kai-chatops/cordon-until"
RECORD_KEYS = (CORDONED_BY, CORDONED_AT, CORDON_REASON, CORDON_UNTIL)
# Words that make a node condition's type a GPU's: NVSentinel's Gpu*, SysLogsXIDError,
# SysLogsSXIDError (NVSwitch XIDs), NVSwitch*, DCGMError; NVLink and others' GpuHealthy.
_GPU_WORDS = ("gpu", "xid", "nvlink", "nvswitch", "dcgm")
_DONE = ("Succeeded", "Failed")  # a pod in these phases holds no GPU


@dataclass(frozen=True)
class GpuCondition:
    """One node condition whose type names a GPU, as written."""

    type: str
    status: str  # "True", "False", "Unknown" or "" (absent)
    reason: str = ""
    message: str = ""
    since: datetime | None = None

    @property
    def failing(self) -> bool:
        """Whether it reports a fault (an Unknown status says nothing either way)."""
        return self.status == ("False" if is_health_named(self.type) else "True")


@dataclass(frozen=True)
class CordonRecord:
    """`spec.unschedulable` and our record of who cordoned the node ("" where absent)."""

    cordoned: bool
    by: str = ""
    at: str = ""
    reason: str = ""
    until: str = ""

    @property
    def is_ours(self) -> bool:
        """Cordoned through kai-chatops (one by hand or by a health tool has no `cordoned-by`)."""
        return self.cordoned and bool(self.by)


@dataclass(frozen=True)
class GpuNode:
    """One node with `nvidia.com/gpu` capacity, as read."""

    name: str
    capacity: int
    allocatable: int
    ready: str  # Ready's status: "True", "False", "Unknown", "" when there is none
    ready_reason: str = ""
    ready_message: str = ""
    conditions: tuple[GpuCondition, ...] = ()
    cordon: CordonRecord = CordonRecord(False)
    allocated: int | None = None  # GPUs its pods request; None: not read

    @property
    def lost(self) -> int:
        """GPUs in its capacity that are not allocatable (marked unhealthy)."""
        return max(self.capacity - self.allocatable, 0)

    @property
    def failing(self) -> tuple[GpuCondition, ...]:
        return tuple(cond for cond in self.conditions if cond.failing)

    @property
    def is_ready(self) -> bool:
        return self.ready == "True"

    @property
    def is_sick(self) -> bool:
        """GPUs lost, not Ready, or a GPU condition reporting a fault: the alert's cause."""
        return self.lost > 0 or not self.is_ready or bool(self.failing)


def is_gpu_condition(type_: str) -> bool:
    """Whether a node condition's type names a GPU (or NVIDIA's GPU fabric and tools)."""
    lowered = type_.lower()
    return any(word in lowered for word in _GPU_WORDS)


def is_health_named(type_: str) -> bool:
    """`GpuHealthy`: True means healthy (`GpuUnhealthy`, `GpuMemWatch` mean the opposite)."""
    lowered = type_.lower()
    return lowered.endswith("healthy") and not lowered.endswith("unhealthy")


def gpu_count(resources: object) -> int:
    """`nvidia.com/gpu` in a resource list (an extended resource is a whole number); 0 when
    absent or unreadable."""
    value = c.as_mapping(resources).get(GPU)
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    text = c.as_text(value).strip()
    return int(text) if text.isdigit() else 0


def read_cordon(obj: RawObject) -> CordonRecord:
    """`spec.unschedulable` (only a boolean true cordons) and our record keys."""
    notes = c.annotations_of(obj)
    return CordonRecord(
        cordoned=c.spec(obj).get("unschedulable") is True,
        by=c.as_text(notes.get(CORDONED_BY)),
        at=c.as_text(notes.get(CORDONED_AT)),
        reason=c.as_text(notes.get(CORDON_REASON)),
        until=c.as_text(notes.get(CORDON_UNTIL)),
    )


def read_gpu_node(obj: RawObject, allocated: int | None = None) -> GpuNode | None:
    """The node as a GPU node, or None when it has no `nvidia.com/gpu` capacity."""
    status = c.status(obj)
    capacity = gpu_count(status.get("capacity"))
    if capacity == 0:
        return None
    conditions = c.list_conditions(obj)
    ready = c.find_condition(conditions, "Ready")
    return GpuNode(
        name=c.object_name(obj),
        capacity=capacity,
        allocatable=gpu_count(status.get("allocatable")),
        ready=c.condition_status(ready) or "",
        ready_reason=c.condition_reason(ready),
        ready_message=c.condition_message(ready),
        conditions=tuple(_gpu_conditions(conditions)),
        cordon=read_cordon(obj),
        allocated=allocated,
    )


def _gpu_conditions(conditions: Iterable[Mapping[str, object]]) -> Iterable[GpuCondition]:
    for cond in conditions:
        type_ = c.as_text(cond.get("type"))
        if is_gpu_condition(type_):
            yield GpuCondition(
                type_,
                c.condition_status(cond) or "",
                c.condition_reason(cond),
                c.condition_message(cond),
                c.last_transition(cond),
            )


def gpu_nodes(nodes: Iterable[RawObject], pods: Iterable[RawObject] | None = None) -> list[GpuNode]:
    """The GPU nodes among `nodes`, by name, with their pods' GPUs when `pods` are given."""
    allocated = allocated_by_node(pods) if pods is not None else None
    found = []
    for obj in nodes:
        name = c.object_name(obj)
        node = read_gpu_node(obj, None if allocated is None else allocated.get(name, 0))
        if node is not None:
            found.append(node)
    return sorted(found, key=lambda node: node.name)


def pod_gpus(pod: RawObject) -> int:
    """The GPUs a pod holds: its containers' requests summed, or its largest init container's
    if more (as the scheduler counts a pod's request: k8s.io/component-helpers
    resource/helpers.go `PodRequests`); an extended resource's request defaults to its limit."""
    spec = c.spec(pod)
    main = sum(_container_gpus(box) for box in _containers(spec.get("containers")))
    init = max((_container_gpus(box) for box in _containers(spec.get("initContainers"))), default=0)
    return max(main, init)


def allocated_by_node(pods: Iterable[RawObject]) -> dict[str, int]:
    """GPUs held on each node by its pods that have not finished."""
    held: dict[str, int] = {}
    for pod in pods:
        node = c.as_text(c.spec(pod).get("nodeName"))
        if node and c.as_text(c.status(pod).get("phase")) not in _DONE:
            held[node] = held.get(node, 0) + pod_gpus(pod)
    return held


def _containers(value: object) -> list[Mapping[str, object]]:
    return [box for box in value if isinstance(box, Mapping)] if isinstance(value, list) else []


def _container_gpus(container: Mapping[str, object]) -> int:
    resources = c.as_mapping(container.get("resources"))
    requests = c.as_mapping(resources.get("requests"))
    return gpu_count(requests if GPU in requests else resources.get("limits"))
