"""GPU nodes losing GPUs, for the demo and tests (`sim gpu_lost NODE`), and their mending.

What the real components show: NVIDIA's device plugin withdraws a GPU it marks unhealthy from the
node's allocatable `nvidia.com/gpu` (capacity stays: 8 → 7 after an XID error, NVIDIA/gpu-operator
issue 1065), and NVSentinel's platform connector sets a GPU condition True with the health
monitor's words (`GpuMemWatch`, reason `GpuMemWatchIsNotHealthy`, the message as in
NVIDIA/NVSentinel issue 911). Writes through the simulator's direct access, so watchers see them.
"""

from __future__ import annotations

from typing import Any

from testbed.sim.simulator import Simulator

GPU = "nvidia.com/gpu"
DEFAULT_NODE = "gpu-node-1"
XID_MESSAGE = (
    "ErrorCode:DCGM_FR_XID_ERROR GPU:3 PCI:0000:9d:00.0 Detected XID 94 for GPU 3 "
    "(contained ECC error) Recommended Action=RESTART_VM;"
)


def gpu_lost(sim: Simulator, node: str = DEFAULT_NODE) -> None:
    """A GPU node loses a GPU: allocatable nvidia.com/gpu one below capacity, GpuMemWatch True."""
    found = sim.get("v1", "Node", node)
    if found is None or GPU not in ((found.get("status") or {}).get("capacity") or {}):
        gpus = ", ".join(_gpu_nodes(sim)) or "none"
        raise LookupError(f"{node} is not a GPU node of the simulated cluster (GPU nodes: {gpus})")
    capacity = int(found["status"]["capacity"][GPU])
    allocatable = int((found["status"].get("allocatable") or {}).get(GPU, capacity))
    sim.patch_status("v1", "Node", node, None, {"allocatable": {GPU: str(max(allocatable - 1, 0))}})
    sim.set_condition(
        "v1", "Node", node, None, "GpuMemWatch", "True", "GpuMemWatchIsNotHealthy", XID_MESSAGE
    )


def heal_nodes(sim: Simulator) -> None:
    """Every scenario node's status back as it was (a cordon, which is spec, stays)."""
    for name in _scenario_nodes(sim):
        original = sim.original("v1", "Node", name)
        if original is not None and sim.get("v1", "Node", name) is not None:
            sim.patch_status("v1", "Node", name, None, original.get("status") or {})


def _gpu_nodes(sim: Simulator) -> list[str]:
    nodes = sim.store.list_objects(sim.store.resolve("v1", "Node"), None)["items"]
    return sorted(n["metadata"]["name"] for n in nodes if GPU in _capacity(n))


def _scenario_nodes(sim: Simulator) -> list[str]:
    nodes = sim.store.list_objects(sim.store.resolve("v1", "Node"), None)["items"]
    return [n["metadata"]["name"] for n in nodes]


def _capacity(node: dict[str, Any]) -> dict[str, Any]:
    return (node.get("status") or {}).get("capacity") or {}
