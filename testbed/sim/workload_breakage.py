"""Breakage of what `/kai diagnose` and `/kai pending` look at, for the demo and tests.

`metrics_apiserver_crashloop`: KEDA's metrics apiserver is OOMKilled again and again, as the
kubelet and the controllers would show it (pod status, Deployment, EndpointSlice, APIService,
events, logs). `gpu_quota_exhausted`: new GPU jobs in annia wait on queue limits, with the
`schedulingConditions` the KAI scheduler writes (kai-workloads.md §1). `starve`: queue vision,
below its GPU quota, has a gang waiting 45 minutes while annia holds twice its quota.
`heal_workloads` undoes them all.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from testbed.sim import podgroups
from testbed.sim.objects import timestamp
from testbed.sim.scheduling_writes import (
    PODGROUP,
    WORK_NS,
    group_event,
    pending_group,
    pending_pod,
    queue_details,
    recorded_event,
)
from testbed.sim.simulator import Simulator

KEDA_NS = "keda"
KAI_NS = "kai-scheduler"
SCHEDULER_POD = "kai-scheduler-default-5b4c7d8f6-w4n6b"  # the default shard's scheduler
METRICS = "keda-operator-metrics-apiserver"
METRICS_POD = f"{METRICS}-7b9f6c5d48-p4x9z"
METRICS_SLICE = f"{METRICS}-8fj2k"
APISERVICE = ("apiregistration.k8s.io/v1", "APIService", "v1beta1.external.metrics.k8s.io")
QUEUE_API = "scheduling.run.ai/v2"
_HEALABLE = (
    ("apps/v1", "Deployment", METRICS, KEDA_NS),
    ("discovery.k8s.io/v1", "EndpointSlice", METRICS_SLICE, KEDA_NS),
    (*APISERVICE, None),
    (QUEUE_API, "Queue", "annia", None),
    (QUEUE_API, "Queue", "gpu-research", None),
    (QUEUE_API, "Queue", "vision", None),
)
STARVED_JOB = "vision-train-m3k7p"
STARVED_GROUP = f"pg-{STARVED_JOB}-2e9c4f70-81ab-4d3e-9c5f-7a6b5c4d3e2f"
STARVED_FOR = timedelta(minutes=45)
# The Go runtime's last words before the kernel's OOM kill, and a leaked token to redact.
_PREVIOUS_LOG = (
    'I0101 00:00:01.000000 1 main.go:112] "Starting metrics server" version="2.17.2"',
    'I0101 00:00:01.200000 1 provider.go:64] "Connecting to KEDA operator" addr=":9666"',
    'W0101 00:00:02.100000 1 client.go:88] "retrying" header="Authorization: Bearer '
    'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrZWRhIn0.c2lnbmF0dXJlLXNpbXVsYXRlZA"',
    'I0101 00:00:03.000000 1 cache.go:201] "Caching external metrics" scaledObjects=4812',
    'W0101 00:00:04.500000 1 cache.go:233] "Metric cache above soft limit" bytes=1041235968',
    "fatal error: runtime: out of memory",
)
_CURRENT_LOG = (
    'I0101 00:00:01.000000 1 main.go:112] "Starting metrics server" version="2.17.2"',
    'I0101 00:00:03.000000 1 cache.go:201] "Caching external metrics" scaledObjects=4812',
)
_PENDING_JOBS = (
    # (job, queue, GPUs per pod, pods, reason, message); PodGroups are `pg-<job>-<job's uid>`.
    (
        "annia-worker-9k4mz",
        "annia",
        4,
        2,
        "OverLimit",
        "annia quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 GPUs "
        "allocated and workload requested 8 GPUs",
    ),
    (
        "llm-finetune-q2w8e",
        "annia",
        8,
        1,
        "NonPreemptibleOverQuota",
        "Non-preemptible workload is over quota. Workload requested 8 GPUs, but annia quota is 4 "
        "GPUs, while 8 GPUs are already allocated for non-preemptible pods. Use a preemptible "
        "workload to go over quota.",  # pkg/scheduler/api/unschedule_info.go, then "." again
    ),
)


def metrics_apiserver_crashloop(sim: Simulator) -> None:
    """KEDA's metrics apiserver in CrashLoopBackOff after OOMKilled (logs, events, no endpoint)."""
    crashloop_pod(
        sim,
        KEDA_NS,
        METRICS_POD,
        last=("OOMKilled", 137),
        previous_log=_PREVIOUS_LOG,
        current_log=_CURRENT_LOG,
        readiness_url="https://10.244.1.23:6443/readyz",
    )
    deployment = ("apps/v1", "Deployment", METRICS, KEDA_NS)
    sim.patch_status(
        *deployment, {"readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": 1}
    )
    sim.set_condition(
        *deployment,
        "Available",
        "False",
        "MinimumReplicasUnavailable",
        "Deployment does not have minimum availability.",
    )
    endpoint_slice = _require(
        sim.get("discovery.k8s.io/v1", "EndpointSlice", METRICS_SLICE, KEDA_NS), METRICS_SLICE
    )
    for endpoint in endpoint_slice["endpoints"]:
        endpoint["conditions"] = {"ready": False, "serving": False, "terminating": False}
    sim.apply(endpoint_slice)
    message = (
        f'endpointslices for service/{METRICS} in "{KEDA_NS}" have no addresses with port name '
        '"https"'
    )
    sim.set_condition(*APISERVICE, None, "Available", "False", "MissingEndpoints", message)


def crashloop_pod(
    sim: Simulator,
    namespace: str,
    name: str,
    *,
    last: tuple[str, int],
    previous_log: Sequence[str],
    current_log: Sequence[str],
    readiness_url: str = "",
) -> None:
    """A pod's first container in CrashLoopBackOff after terminating with `last` (reason, exit
    code), as the kubelet shows it: not ready, restarts, both instances' logs, BackOff events
    (and failed readiness probes of `readiness_url`). `heal_workloads` undoes it."""
    now = sim.store.clock()
    pod = _require(sim.get("v1", "Pod", name, namespace), name)
    container = pod["spec"]["containers"][0]["name"]
    reason, exit_code = last
    finished = timestamp(now - timedelta(seconds=20))
    status = copy.deepcopy(pod["status"])
    status["conditions"] = [_ready(c, "False") for c in status["conditions"]]
    status["containerStatuses"][0].update(
        ready=False,
        started=False,
        restartCount=7,
        state={"waiting": {"reason": "CrashLoopBackOff", "message": _back_off(container, name)}},
        lastState={"terminated": {"reason": reason, "exitCode": exit_code, "finishedAt": finished}},
    )
    sim.patch_status("v1", "Pod", name, namespace, status)
    sim.write_log(namespace, name, container, previous_log, previous=True)
    sim.write_log(namespace, name, container, current_log)
    back_off = _back_off(container, name)
    sim.apply(recorded_event(namespace, "Pod", name, "BackOff", back_off, 12, now))
    if readiness_url:
        unhealthy = f'Readiness probe failed: Get "{readiness_url}": connection refused'
        earlier = now - timedelta(minutes=2)
        sim.apply(recorded_event(namespace, "Pod", name, "Unhealthy", unhealthy, 5, earlier))


def gpu_quota_exhausted(sim: Simulator) -> None:
    """New GPU jobs in annia stay pending: OverLimit and NonPreemptibleOverQuota on queue annia."""
    now = sim.store.clock()
    for job, queue, gpus, count, reason, message in _PENDING_JOBS:
        group = _group_name(job)
        details = queue_details(queue, gpus * count)
        pending = pending_group(group, queue, gpus * count, count, reason, message, details, now)
        sim.apply(pending)
        sim.apply(group_event(pending, now))
        for index in range(count):
            pod = f"{job}-{index}"
            sim.apply(pending_pod(pod, group, queue, gpus, f"{reason}: {message}."))
            sim.apply(
                recorded_event(
                    WORK_NS,
                    "Pod",
                    pod,
                    "Unschedulable",
                    f"{reason}: {message}.",
                    3,
                    now,
                    "kai-scheduler",
                )
            )
    sim.patch_status(
        QUEUE_API,
        "Queue",
        "annia",
        None,
        {"allocated": {"nvidia.com/gpu": "8"}, "requested": {"nvidia.com/gpu": "24"}},
    )
    sim.patch_status(
        QUEUE_API,
        "Queue",
        "gpu-research",
        None,
        {"allocated": {"nvidia.com/gpu": "10"}, "requested": {"nvidia.com/gpu": "26"}},
    )


def starve(sim: Simulator) -> None:
    """Queue vision starved: below its GPU quota, a gang pending 45m, while annia is over quota."""
    now = sim.store.clock()
    group, gpus, pods = STARVED_GROUP, 2, 2
    fit_error = (
        "no nodes with enough resources were found: 4 node(s) didn't have enough resources: GPUs."
    )
    message = (
        f"Resources were found for 0 pods while {pods} are required for gang scheduling. "
        f"Additional pods cannot be scheduled due to: {fit_error}"
    )
    waiting = pending_group(
        group, "vision", gpus * pods, pods, "PodSchedulingErrors", message, {}, now
    )
    condition = waiting["status"]["schedulingConditions"][0]
    condition["lastTransitionTime"] = timestamp(now - STARVED_FOR)
    del condition["reasons"][0]["details"]  # the gang's fit error names no queue
    sim.apply(waiting)
    for index in range(pods):
        # The pod the scheduler tried says why no node took it; the rest say why the gang waits.
        said = fit_error if index == 0 else f"PodSchedulingErrors: {message}."
        pod = f"{STARVED_JOB}-{index}"
        sim.apply(pending_pod(pod, group, "vision", gpus, said))
        sim.apply(
            recorded_event(WORK_NS, "Pod", pod, "Unschedulable", said, 3, now, "kai-scheduler")
        )
    sim.apply(group_event(waiting, now))
    for queue, allocated, requested in (
        ("annia", 8, 8),
        ("gpu-research", 10, 14),
        ("vision", 2, 6),
    ):
        status = {
            "allocated": {"nvidia.com/gpu": str(allocated)},
            "requested": {"nvidia.com/gpu": str(requested)},
        }
        sim.patch_status(QUEUE_API, "Queue", queue, None, status)


def schedule_starved(sim: Simulator) -> None:
    """The starved gang runs at last, its GPUs allocated (`podgroups.scheduled`: its conditions
    cleared by KAI v0.17, left by older releases)."""
    podgroups.scheduled(sim, STARVED_GROUP, WORK_NS, {"nvidia.com/gpu": "4"})
    allocated = {"allocated": {"nvidia.com/gpu": "6"}, "requested": {"nvidia.com/gpu": "6"}}
    sim.patch_status(QUEUE_API, "Queue", "vision", None, allocated)


def crashing_deployment(sim: Simulator, namespace: str, name: str, pods: int) -> None:
    """A Deployment with `pods` running pods, the first one in CrashLoopBackOff after OOMKilled
    with a log before its restart (for tests and benches of `/kai diagnose` at any scale)."""
    labels = {"app": name}
    status = {"replicas": pods, "updatedReplicas": pods, "availableReplicas": max(pods - 1, 0)}
    sim.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": pods, "selector": {"matchLabels": labels}},
            "status": status,
        }
    )
    template = _require(sim.get("v1", "Pod", METRICS_POD, KEDA_NS), METRICS_POD)
    container = template["spec"]["containers"][0]["name"]
    for i in range(pods):
        pod = copy.deepcopy(template)
        pod["metadata"] = {"name": f"{name}-{i:04}", "namespace": namespace, "labels": labels}
        if i == 0:
            pod["status"]["containerStatuses"][0].update(
                restartCount=4,
                state={"waiting": {"reason": "CrashLoopBackOff"}},
                lastState={"terminated": {"reason": "OOMKilled", "exitCode": 137}},
            )
        sim.apply(pod)
    steps = [f"step {i}" for i in range(100)]
    sim.write_log(namespace, f"{name}-0000", container, steps, previous=True)


def heal_workloads(sim: Simulator) -> None:
    """Undo both: the scenario's objects back, the pending jobs and the events gone."""
    for api_version, kind, name, namespace in _HEALABLE:
        original = sim.original(api_version, kind, name, namespace)
        if original is not None:
            sim.apply(original)
    for job, _queue, _gpus, count, _reason, _message in _PENDING_JOBS:
        sim.delete(PODGROUP, "PodGroup", _group_name(job), WORK_NS)
        for index in range(count):
            sim.delete("v1", "Pod", f"{job}-{index}", WORK_NS)
    sim.delete(PODGROUP, "PodGroup", STARVED_GROUP, WORK_NS)
    for index in range(2):
        sim.delete("v1", "Pod", f"{STARVED_JOB}-{index}", WORK_NS)
    for namespace in (KEDA_NS, WORK_NS, KAI_NS):
        for event in sim.store.list_objects(sim.store.resolve("v1", "Event"), namespace)["items"]:
            if event["metadata"]["name"].startswith("sim-"):
                sim.delete("v1", "Event", event["metadata"]["name"], namespace)
    for namespace, pod in ((KEDA_NS, METRICS_POD), (KAI_NS, SCHEDULER_POD)):
        original = sim.original("v1", "Pod", pod, namespace)
        if original is not None:
            sim.apply(original)
            container = original["spec"]["containers"][0]["name"]
            sim.logs.write(namespace, pod, container, "", previous=True)
            sim.logs.write(namespace, pod, container, "")


def _group_name(job: str) -> str:
    uid = {"annia-worker-9k4mz": "5c2e8a41", "llm-finetune-q2w8e": "b7d19f03"}[job]
    return f"pg-{job}-{uid}-6f1d-4a9b-8e27-0c3b5d7a9e11"


def _ready(condition: dict[str, Any], status: str) -> dict[str, Any]:
    if condition.get("type") in ("Ready", "ContainersReady"):
        return {**condition, "status": status, "reason": "ContainersNotReady"}
    return condition


def _back_off(container: str, pod: str) -> str:
    return f"back-off 5m0s restarting failed container={container} pod={pod}"


def _require(obj: dict[str, Any] | None, name: str) -> dict[str, Any]:
    if obj is None:
        raise LookupError(f"{name} is not in the simulated cluster (load the default scenario)")
    return obj
