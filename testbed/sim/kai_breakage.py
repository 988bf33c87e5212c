"""What KAI's operator leaves in the simulated cluster when an operand changes or the operator
stops mid-pass, as the simulator's release writes it (`sim.kai`): the operand workloads are
changed as `Deploy` and Kubernetes' controllers would, then the operator's status pass runs
(`testbed.sim.kai_operator`, or only its start when the operator dies).

- `numa_exporter_on` / `numa_exporter_down`: the NUMA placement exporter DaemonSet (v0.16.0+,
  KAI-Scheduler pkg/operator/operands/numa_placement_exporter/): enabled in kai-config, then a
  node's pod not available, which the operator reports as `NumaPlacementExporter: DaemonSet
  [numa-placement-exporter] is not available`.
- `operator_dies_mid_pass`: a pass that begins (`UpdateStartReconcileStatus`) and never ends, the
  operator gone before its deferred `ReconcileStatus`; with `spec_edit` after a change of
  kai-config's spec, as the only way v0.14+ begins a pass that writes anything (#1229).
"""

from __future__ import annotations

from typing import Any

from testbed.sim import kai_operator, kai_status
from testbed.sim.simulator import Simulator

KAI = "kai.scheduler/v1"
KAI_NS = "kai-scheduler"
EXPORTER = "numa-placement-exporter"


def numa_exporter_on(sim: Simulator, nodes: int = 3) -> None:
    """kai-config enables the NUMA placement exporter; its DaemonSet runs on `nodes` nodes.

    Raises:
        ValueError: the simulator's release has no such operand (before v0.16.0).
    """
    if not sim.kai.numa_exporter:
        raise ValueError(f"KAI {sim.kai.tag} has no NUMA placement exporter (v0.16.0)")
    enabled = {"spec": {"numaPlacementExporter": {"service": {"enabled": True}}}}
    sim.patch(KAI, "Config", kai_operator.KAI_CONFIG, patch=enabled)
    sim.apply(_exporter(nodes))
    kai_operator.reconcile(sim.store, sim.kai)


def numa_exporter_down(sim: Simulator, available: int = 2) -> None:
    """The exporter's pod is available on `available` of its nodes only."""
    status = {"numberAvailable": available, "numberReady": available}
    sim.patch_status("apps/v1", "DaemonSet", EXPORTER, KAI_NS, status)
    kai_operator.reconcile(sim.store, sim.kai)


def operator_dies_mid_pass(sim: Simulator, *, spec_edit: bool = True) -> None:
    """The operator begins a pass over kai-config and dies before ending it."""
    if spec_edit:
        config = sim.get(KAI, "Config", kai_operator.KAI_CONFIG) or {}
        replicas = int(((config.get("spec") or {}).get("global") or {}).get("replicaCount", 1))
        more = {"spec": {"global": {"replicaCount": replicas + 1}}}
        sim.patch(KAI, "Config", kai_operator.KAI_CONFIG, patch=more)
    config = sim.get(KAI, "Config", kai_operator.KAI_CONFIG) or {}
    deployed = kai_status.computed(sim.kai, config, [], {}, "")[0]  # every operand there
    began = [*kai_status.started(sim.kai, config), deployed]
    old = (config.get("status") or {}).get("conditions") or []
    written = kai_status.merged(old, began, sim.store.clock())
    sim.patch_status(KAI, "Config", kai_operator.KAI_CONFIG, None, {"conditions": written})


def _exporter(nodes: int) -> dict[str, Any]:
    """The DaemonSet as `DaemonSetForKAIConfig` builds it (`app=<name>`, no managed-by label),
    its pods available on every node."""
    labels = {"app": EXPORTER}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": EXPORTER, "namespace": KAI_NS, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": EXPORTER,
                    "containers": [
                        {
                            "name": EXPORTER,
                            "image": "ghcr.io/kai-scheduler/kai-scheduler/numa-placement-exporter",
                        }
                    ],
                },
            },
        },
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": nodes,
            "currentNumberScheduled": nodes,
            "updatedNumberScheduled": nodes,
            "numberReady": nodes,
            "numberAvailable": nodes,
        },
    }
