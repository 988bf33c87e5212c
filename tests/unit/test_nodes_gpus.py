"""What a GPU node says about its GPUs (`bot.nodes.gpus`): lost, Ready, GPU conditions, cordon."""

from __future__ import annotations

import pytest
from objects import condition, gpu_pod, node

from bot.nodes import gpus


def test_a_node_without_gpu_capacity_is_not_a_gpu_node() -> None:
    assert gpus.read_gpu_node(node("cpu-node-1", gpus=None)) is None
    assert gpus.read_gpu_node(node("zero", gpus=0)) is None


def test_allocatable_below_capacity_counts_the_gpus_lost_and_makes_it_sick() -> None:
    found = gpus.read_gpu_node(node(allocatable=7))
    assert found is not None
    assert (found.capacity, found.allocatable, found.lost, found.is_sick) == (8, 7, 1, True)


def test_a_healthy_ready_node_with_every_gpu_is_well() -> None:
    found = gpus.read_gpu_node(node())
    assert found is not None and not found.is_sick and found.lost == 0


@pytest.mark.parametrize("ready", ["False", "Unknown", None], ids=["false", "unknown", "missing"])
def test_ready_not_true_makes_it_sick(ready: str | None) -> None:
    found = gpus.read_gpu_node(node(ready=ready))
    assert found is not None and found.is_sick and not found.is_ready


@pytest.mark.parametrize(
    ("type_", "status", "failing"),
    [
        ("GpuHealthy", "False", True),
        ("GpuHealthy", "True", False),
        ("GpuUnhealthy", "True", True),
        ("GpuUnhealthy", "False", False),
        ("GpuMemWatch", "True", True),
        ("GpuMemWatch", "False", False),
        ("SysLogsXIDError", "True", True),
        ("SysLogsGPUFallenOff", "True", True),
        ("NVSwitchFatalError", "True", True),
        ("DCGMError", "True", True),
        ("GpuMemWatch", "Unknown", False),
        ("GpuHealthy", "Unknown", False),
    ],
)
def test_a_gpu_condition_fails_as_nvidias_health_tools_write_it(
    type_: str, status: str, failing: bool
) -> None:
    found = gpus.read_gpu_node(node(conditions=[condition(type_, status, message="GPU 3")]))
    assert found is not None
    (cond,) = found.conditions
    assert (cond.type, cond.failing, found.is_sick) == (type_, failing, failing)


@pytest.mark.parametrize("type_", ["MemoryPressure", "DiskPressure", "KernelDeadlock", "Healthy"])
def test_conditions_that_name_no_gpu_are_not_gpu_conditions(type_: str) -> None:
    found = gpus.read_gpu_node(node(conditions=[condition(type_, "True")]))
    assert found is not None and found.conditions == () and not found.is_sick


def test_the_cordon_record_is_read_from_spec_and_our_annotations() -> None:
    notes = {
        gpus.CORDONED_BY: "U1",
        gpus.CORDONED_AT: "2026-08-24T08:00:00Z",
        gpus.CORDON_REASON: "XID 79",
        gpus.CORDON_UNTIL: "2026-08-24T10:00:00Z",
    }
    record = gpus.read_cordon(node(unschedulable=True, annotations=notes))
    assert record == gpus.CordonRecord(
        True, "U1", "2026-08-24T08:00:00Z", "XID 79", "2026-08-24T10:00:00Z"
    )
    assert record.is_ours
    assert not gpus.read_cordon(node(unschedulable=True)).is_ours
    assert not gpus.read_cordon(node(annotations=notes)).cordoned  # a record left, not cordoned


def test_a_string_unschedulable_does_not_cordon() -> None:
    obj = node()
    obj["spec"] = {"unschedulable": "true"}
    assert not gpus.read_cordon(obj).cordoned


def test_allocated_sums_the_unfinished_pods_gpus_per_node() -> None:
    pods = [
        gpu_pod("a", "gpu-node-1", 4),
        gpu_pod("b", "gpu-node-1", 2, requests=True),
        gpu_pod("c", "gpu-node-1", 8, phase="Succeeded"),
        gpu_pod("d", "gpu-node-1", 8, phase="Failed"),
        gpu_pod("e", "gpu-node-2", 1, phase="Pending"),
        {"spec": {"containers": [{"name": "x"}]}, "status": {"phase": "Pending"}},  # unbound
    ]
    assert gpus.allocated_by_node(pods) == {"gpu-node-1": 6, "gpu-node-2": 1}


def test_a_pods_gpus_are_its_containers_or_its_largest_init_container() -> None:
    pod = gpu_pod("a", "n", 1)
    pod["spec"]["containers"].append({"name": "b", "resources": {"limits": {"nvidia.com/gpu": 2}}})
    assert gpus.pod_gpus(pod) == 3
    pod["spec"]["initContainers"] = [{"resources": {"requests": {"nvidia.com/gpu": "4"}}}]
    assert gpus.pod_gpus(pod) == 4


@pytest.mark.parametrize("value", ["x", "-1", "1.5", None, True, -3])
def test_an_unreadable_gpu_count_reads_as_none(value: object) -> None:
    assert gpus.gpu_count({"nvidia.com/gpu": value}) == 0


def test_gpu_nodes_are_sorted_by_name_with_their_pods_gpus() -> None:
    nodes = [node("gpu-b"), node("cpu", gpus=None), node("gpu-a", allocatable=6)]
    found = gpus.gpu_nodes(nodes, [gpu_pod("p", "gpu-a", 3)])
    assert [(n.name, n.lost, n.allocated) for n in found] == [("gpu-a", 2, 3), ("gpu-b", 0, 0)]
    assert [n.allocated for n in gpus.gpu_nodes(nodes)] == [None, None]


def test_a_pod_without_gpus_holds_none_and_a_condition_without_status_reads_unset() -> None:
    assert gpus.pod_gpus(gpu_pod("cpu", "gpu-node-1", 0)) == 0
    bare = {"type": "GpuHealthy"}
    found = gpus.read_gpu_node(node(conditions=[bare]))
    assert found is not None
    assert found.conditions == (gpus.GpuCondition("GpuHealthy", "", "", "", None),)
