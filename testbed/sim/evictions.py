"""KAI evictions in the simulated cluster: `reclaim` for the demo and the tests, and any Evict
Event as KAI's scheduler records it.

KAI records, for each pod it evicts, a Normal Event `reason: Evict` on the evicted PodGroup
through client-go's recorder (`AnnotatedEventf`): named `<group>.<hex time>`, involvedObject the
PodGroup (scheduling.run.ai/v2alpha2, with its uid), source `kai-scheduler`, the annotations
`evictor-action-type`, `num-evicted-pods` and, but for a stale gang, `evictor-pod-group-name` /
`evictor-pod-group-namespace` (KAI-Scheduler pkg/scheduler/cache/status_updater/
default_status_updater.go `Evicted`); a reclaim's message names the pod and the reclaimer, then
both queues' use, each as `<GPU: n, CPU: n (cores), memory: n (GB)>` (pkg/scheduler/api/
unschedule_info.go `GetReclaimMessage`, `GetReclaimQueueDetailsMessage`; resource_info/
resource_requirment.go). `num-evicted-pods` counts the pods of the whole eviction, on the Event
of each group it took from. As real v0.12.0 records them (tests/cluster/
test_upstream_differential_kai.py). The recorder counts a repeat of the same Event up (`count`,
`lastTimestamp`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from testbed.sim.objects import timestamp
from testbed.sim.simulator import Simulator

PODGROUP = "scheduling.run.ai/v2alpha2"
QUEUE_API = "scheduling.run.ai/v2"
EVICTED_NS = "vision"
EVICTED = "pg-vision-sweep-q8r2t-1d4c7e9a-3b5f-4e21-9c8d-7a6b5c4d3e2f"
RECLAIMER_NS = "annia"
RECLAIMER = "pg-annia-train-m3k9p-8e7d6c5b-4a39-4f28-b1c0-9d8e7f6a5b4c"


def reclaim(sim: Simulator) -> None:
    """Queue annia, below its quota, reclaims 4 GPUs from vision's sweep (an Evict Event).
    The reclaim is done, as the queues' `allocated` say: annia's job runs on the 4 GPUs, and
    vision's sweep on the 4 it kept, so no group waits. A group left waiting would be one the
    scheduler never looks at again, which a live scheduler is not: the stall alert would page
    a healthy cluster `alerts.stall_after` later (`bot.alerts.stall`)."""
    if sim.get("v1", "Namespace", EVICTED_NS) is None:
        sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": EVICTED_NS}})
    evicted = sim.apply(_group(EVICTED, EVICTED_NS, "vision", 4))
    sim.apply(_group(RECLAIMER, RECLAIMER_NS, "annia", 4))
    sim.patch_status(QUEUE_API, "Queue", "vision", None, {"allocated": {"nvidia.com/gpu": "4"}})
    sim.patch_status(QUEUE_API, "Queue", "annia", None, {"allocated": {"nvidia.com/gpu": "4"}})
    pod = "sweep-q8r2t-0"
    message = (
        f"Pod {EVICTED_NS}/{pod} was preempted by workload {RECLAIMER_NS}/{RECLAIMER}.\n"
        "vision uses <GPU: 8, CPU: 16 (cores), memory: 64 (GB)> with a quota of <GPU: 4, "
        "CPU: 0 (cores), memory: 0 (GB)>, fair-share of <GPU: 4, CPU: 16 (cores), memory: 64 "
        "(GB)> and queue priority of <100>.\n"
        "annia uses <GPU: 0, CPU: 0 (cores), memory: 0 (GB)> with a quota of <GPU: 4, CPU: 0 "
        "(cores), memory: 0 (GB)>, fair-share of <GPU: 4, CPU: 0 (cores), memory: 0 (GB)> and "
        "queue priority of <100>."
    )
    annotations = kai_annotations("reclaim", 1, RECLAIMER, RECLAIMER_NS)
    sim.apply(evict_event(evicted, message, annotations, sim.store.clock()))


def heal_reclaim(sim: Simulator) -> None:
    """Undo `reclaim`: its PodGroups and Evict Events gone, the queues as the scenario has them."""
    for name, namespace in ((EVICTED, EVICTED_NS), (RECLAIMER, RECLAIMER_NS)):
        sim.delete(PODGROUP, "PodGroup", name, namespace)
    for event in sim.store.list_objects(sim.store.resolve("v1", "Event"), None)["items"]:
        if event.get("reason") == "Evict" and event["involvedObject"].get("name") == EVICTED:
            sim.delete("v1", "Event", event["metadata"]["name"], event["metadata"]["namespace"])
    for queue in ("vision", "annia"):
        original = sim.original(QUEUE_API, "Queue", queue, None)
        if original is not None:
            sim.apply(original)


def kai_annotations(
    action: str, pods: int, evictor: str = "", evictor_namespace: str = ""
) -> dict[str, str]:
    """The annotations KAI puts on an Evict Event (no evictor for a stale gang)."""
    notes = {"evictor-action-type": action, "num-evicted-pods": str(pods)}
    if evictor:
        notes |= {
            "evictor-pod-group-name": evictor,
            "evictor-pod-group-namespace": evictor_namespace,
        }
    return notes


def evict_event(
    group: dict[str, Any], message: str, annotations: dict[str, str], when: datetime
) -> dict[str, Any]:
    """An Evict Event on the stored PodGroup `group`, as KAI's recorder writes it."""
    meta = group["metadata"]
    at = timestamp(when)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta['name']}.{int(when.timestamp() * 1e9):x}",
            "namespace": meta["namespace"],
            "annotations": annotations,
        },
        "involvedObject": {
            "kind": "PodGroup",
            "apiVersion": PODGROUP,
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
        },
        "reason": "Evict",
        "message": message,
        "type": "Normal",
        "count": 1,
        "firstTimestamp": at,
        "lastTimestamp": at,
        "source": {"component": "kai-scheduler"},
        "reportingComponent": "kai-scheduler",
        "reportingInstance": "",
    }


def evicted_again(sim: Simulator, event: dict[str, Any], when: datetime) -> dict[str, Any]:
    """The same Event once more, as the recorder counts a repeat: count up, lastTimestamp now."""
    meta = event["metadata"]
    stored = sim.get("v1", "Event", meta["name"], meta["namespace"]) or event
    again = {**stored, "count": int(stored.get("count") or 1) + 1, "lastTimestamp": timestamp(when)}
    return sim.apply(again)


def _group(name: str, namespace: str, queue: str, pods: int) -> dict[str, Any]:
    """A running group: everything it requested is allocated (the pod-group-controller's sums)."""
    gpus = {"nvidia.com/gpu": str(pods)}
    return {
        "apiVersion": PODGROUP,
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"kai.scheduler/queue": queue},
        },
        "spec": {"minMember": pods, "queue": queue, "priorityClassName": "train"},
        "status": {"resourcesStatus": {"requested": gpus, "allocated": gpus}},
    }
