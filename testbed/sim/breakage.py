"""Named ways to break the simulated cluster, and `heal` to undo them, for the demo and tests.

Each action takes a `Simulator` and writes through its direct access (so resourceVersions move
and watchers see the change), doing what the real controller would show for that failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from testbed.sim import evictions, node_breakage
from testbed.sim.kai_stall import heal_stall, scheduler_stall
from testbed.sim.simulator import Simulator
from testbed.sim.workload_breakage import (
    SCHEDULER_POD,
    crashloop_pod,
    gpu_quota_exhausted,
    heal_workloads,
    metrics_apiserver_crashloop,
    starve,
)

KAI = "kai.scheduler/v1"
KAI_NS = "kai-scheduler"
APISERVICE = ("apiregistration.k8s.io/v1", "APIService", "v1beta1.external.metrics.k8s.io")
MISSING_ENDPOINTS = (
    'endpointslices for service/keda-operator-metrics-apiserver in "keda" '
    'have no addresses with port name "https"'
)
# A Go program's last words before a panic (exit code 2), as a crashing scheduler prints them.
_SCHEDULER_LOG = (
    'I0101 00:00:01.000000 1 main.go:64] "Starting scheduler" shard="default"',
    'I0101 00:00:01.300000 1 cache.go:118] "Waiting for informer caches to sync"',
    "panic: runtime error: invalid memory address or nil pointer dereference",
    "[signal SIGSEGV: segmentation violation code=0x1 addr=0x28 pc=0x1b2f4c7]",
    "goroutine 1 [running]:",
)
_HEALABLE = (
    (KAI, "Config", "kai-config", None),
    (KAI, "SchedulingShard", "default", None),
    ("apps/v1", "Deployment", "kai-operator", KAI_NS),
    ("apps/v1", "Deployment", "kai-scheduler-default", KAI_NS),
    (*APISERVICE, None),
)


def dependencies_missing(sim: Simulator) -> None:
    """kai-config: DependenciesFulfilled False (the Prometheus operator is missing)."""
    config = _require(sim.get(KAI, "Config", "kai-config"), "kai-config")
    message = "\nKAI-prometheus is missing prometheus operator"
    generation = int(config["metadata"]["generation"])
    sim.set_condition(
        KAI,
        "Config",
        "kai-config",
        None,
        type="DependenciesFulfilled",
        status="False",
        reason="dependencies_missing",
        message=message,
        observed_generation=generation,
    )


def delete_kai_config(sim: Simulator) -> None:
    """Delete the kai-config Config (as an Argo CD prune did in KAI issue #1751)."""
    sim.delete(KAI, "Config", "kai-config")


def operator_down(sim: Simulator) -> None:
    """The kai-operator Deployment has no available replica (KAI conditions freeze)."""
    _make_unavailable(sim, "kai-operator")


def scheduler_down(sim: Simulator) -> None:
    """The kai-scheduler-default Deployment is unavailable (its pod crashlooping), and the
    default shard says so."""
    _make_unavailable(sim, "kai-scheduler-default")
    if sim.get("v1", "Pod", SCHEDULER_POD, KAI_NS) is not None:  # the kai-workloads scenario
        crashloop_pod(
            sim,
            KAI_NS,
            SCHEDULER_POD,
            last=("Error", 2),
            previous_log=_SCHEDULER_LOG,
            current_log=_SCHEDULER_LOG[:1],
        )
    message = (
        "SchedulerForShard: Deployment [kai-scheduler-default] is not available\n"
        "SchedulerForShard: not available"
    )
    if sim.get(KAI, "SchedulingShard", "default") is not None:
        shard = (KAI, "SchedulingShard", "default", None)
        sim.set_condition(*shard, "Available", "False", "available", message)
        sim.set_condition(*shard, "Ready", "False", "not_ready", "System not ready")


def apiservice_down(sim: Simulator) -> None:
    """The external-metrics APIService is not Available (MissingEndpoints)."""
    _require(sim.get(*APISERVICE), APISERVICE[2])
    sim.set_condition(
        *APISERVICE, None, "Available", "False", "MissingEndpoints", MISSING_ENDPOINTS
    )


def apiservice_missing(sim: Simulator) -> None:
    """Delete the external-metrics APIService."""
    sim.delete(*APISERVICE)


def stale_generation(sim: Simulator) -> None:
    """Change kai-config's spec so its generation runs ahead of its conditions."""
    config = _require(sim.get(KAI, "Config", "kai-config"), "kai-config")
    replicas = int(config.get("spec", {}).get("global", {}).get("replicaCount", 1))
    sim.patch(
        KAI, "Config", "kai-config", patch={"spec": {"global": {"replicaCount": replicas + 1}}}
    )


def pause_by_hand(sim: Simulator) -> None:
    """ScaledJob annia/annia-worker paused by hand (no kai-chatops record, no end): reminded of."""
    job = ("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
    _require(sim.get(*job), "ScaledJob annia/annia-worker")
    paused = {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}}
    sim.patch(*job, patch=paused)


def heal(sim: Simulator, *, evictions_too: bool = True) -> None:
    """Restore every object the actions above touch to its scenario state, conditions current;
    `evictions_too=False` leaves a reclaim's PodGroups and Evict Events as they are (a cluster
    keeps its Events for their TTL, an hour, whatever else is mended meanwhile)."""
    for api_version, kind, name, namespace in _HEALABLE:
        original = sim.original(api_version, kind, name, namespace)
        if original is None:
            continue
        current = sim.get(api_version, kind, name, namespace)
        if current is None:
            sim.apply(original)
            continue
        sim.apply(_caught_up(original, current))
    heal_workloads(sim)
    heal_stall(sim)
    node_breakage.heal_nodes(sim)
    if evictions_too:
        evictions.heal_reclaim(sim)


# Each takes the simulator; a few take words too (`sim gpu_lost NODE`), with defaults.
ACTIONS: dict[str, Callable[..., None]] = {
    "dependencies_missing": dependencies_missing,
    "delete_kai_config": delete_kai_config,
    "operator_down": operator_down,
    "scheduler_down": scheduler_down,
    "scheduler_stall": scheduler_stall,
    "apiservice_down": apiservice_down,
    "apiservice_missing": apiservice_missing,
    "stale_generation": stale_generation,
    "metrics_apiserver_crashloop": metrics_apiserver_crashloop,
    "gpu_quota_exhausted": gpu_quota_exhausted,
    "reclaim": evictions.reclaim,
    "starve": starve,
    "pause_by_hand": pause_by_hand,
    "gpu_lost": node_breakage.gpu_lost,
    "heal": heal,
}


def describe_actions() -> dict[str, str]:
    """Each action's one-line description, for the demo's `sim` command help."""
    return {
        name: (action.__doc__ or "").strip().splitlines()[0] for name, action in ACTIONS.items()
    }


def _require(obj: dict[str, Any] | None, name: str) -> dict[str, Any]:
    if obj is None:
        raise LookupError(f"{name} is not in the simulated cluster (load its scenario first)")
    return obj


def _make_unavailable(sim: Simulator, name: str) -> None:
    _require(sim.get("apps/v1", "Deployment", name, KAI_NS), name)
    deployment = ("apps/v1", "Deployment", name, KAI_NS)
    sim.patch_status(
        *deployment, {"readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": 1}
    )
    message = "Deployment does not have minimum availability."
    sim.set_condition(*deployment, "Available", "False", "MinimumReplicasUnavailable", message)


def _caught_up(original: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The original object with its conditions observed at the generation it will have."""
    healed = dict(original)
    same_spec = _spec(original) == _spec(current)
    generation = int(current["metadata"]["generation"]) + (0 if same_spec else 1)
    old_generation = original["metadata"].get("generation")
    conditions = (healed.get("status") or {}).get("conditions") or []
    for condition in conditions:
        if condition.get("observedGeneration") == old_generation:
            condition["observedGeneration"] = generation
    return healed


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
