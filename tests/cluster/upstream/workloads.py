"""Workloads for KAI's real scheduler: GPU pods in a queue, and what KAI writes about them.

A pod names KAI's scheduler and its queue (`kai.scheduler/queue`); KAI's podgrouper makes its
PodGroup (annotation `pod-group-name` on the pod), the scheduler places it or writes why not
(`status.schedulingConditions` of the PodGroup), the binder binds it, kwok runs it. Reclaims are
recorded as Normal Events `reason: Evict` on the evicted PodGroup (KAI-scheduler
pkg/scheduler/cache/status_updater/default_status_updater.go).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controlplane import ControlPlane, poll
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from seeding import Seeder

from upstream import kai

QUEUE_LABEL = "kai.scheduler/queue"
GROUP_ANNOTATION = "pod-group-name"
# kwok's pod stages wait 1 s plus up to 5 s of jitter at each step unless a pod's annotations
# say how long (kustomize/stage/pod/general/*.yaml `delay.durationFrom`): these pods are made,
# started and deleted at once, so a test waits on KAI rather than on kwok.
AT_ONCE = {
    f"{stage}.stage.kwok.x-k8s.io/{key}": "0s"
    for stage in ("pod-create", "pod-ready")
    for key in ("delay", "jitter-delay")
} | {"pod-delete.stage.kwok.x-k8s.io/delay": "0s"}


def gpu_pod(name: str, namespace: str, queue: str, gpus: int) -> dict[str, Any]:
    """A bare pod of `queue` asking for `gpus` GPUs of KAI's scheduler."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue},
            "annotations": dict(AT_ONCE),
        },
        "spec": _pod_spec(gpus),
    }


def gpu_job(name: str, namespace: str, queue: str, gpus: int) -> dict[str, Any]:
    """A batch Job of one pod (KAI's podgrouper makes one PodGroup for it, owned by the Job, so
    the group outlives an evicted pod: the Job makes another). Its pod runs for a day: kwok
    completes a Job's pods a few seconds after they turn Ready unless told when (its stage
    pod-complete reads these annotations; a jitter not above the delay is the delay)."""
    later = {f"pod-complete.stage.kwok.x-k8s.io/{key}": "24h" for key in ("delay", "jitter-delay")}
    template = {
        "metadata": {"labels": {QUEUE_LABEL: queue}, "annotations": AT_ONCE | later},
        "spec": _pod_spec(gpus),
    }
    template["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {"template": template, "backoffLimit": 6},
    }


def _pod_spec(gpus: int) -> dict[str, Any]:
    container = {
        "name": "main",
        "image": "busybox",
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }
    return {
        "schedulerName": kai.SCHEDULER_NAME,
        "containers": [container],
        "terminationGracePeriodSeconds": 0,
    }


@dataclass
class Workloads:
    """The pods and Jobs a test made; delete_all() deletes them and waits until their pods are
    gone, and the Evict Events with them (a later test's notices start from nothing)."""

    plane: ControlPlane
    namespace: str
    made: list[dict[str, Any]] = field(default_factory=list)

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.plane.admin())

    def pod(self, name: str, queue: str, gpus: int) -> str:
        return self.make(gpu_pod(name, self.namespace, queue, gpus))

    def job(self, name: str, queue: str, gpus: int) -> str:
        return self.make(gpu_job(name, self.namespace, queue, gpus))

    def make(self, body: dict[str, Any]) -> str:
        """Create `body` (any kind) as the admin; delete_all() deletes it."""
        Seeder(self.plane.admin()).replace(body)
        self.made.append(body)
        return str(body["metadata"]["name"])

    def pods_of(self, name: str) -> list[Any]:
        """The live pods of the pod or Job `name` (a Job's by its `job-name` label)."""
        listed = self.core.list_namespaced_pod(self.namespace).items
        return [
            p
            for p in listed
            if p.metadata.deletion_timestamp is None
            and (p.metadata.name == name or (p.metadata.labels or {}).get("job-name") == name)
        ]

    def wait_running(self, names: list[str], deadline_s: float = 90) -> None:
        def running() -> bool | None:
            self.plane.check_alive()
            pods = [self.pods_of(n) for n in names]
            ok = all(found and all(p.status.phase == "Running" for p in found) for found in pods)
            return True if ok else None

        poll(f"{', '.join(names)} Running", running, deadline_s)

    def delete_all(self) -> None:
        admin = Seeder(self.plane.admin())
        for body in self.made:
            admin.remove(body)
        names = {b["metadata"]["name"] for b in self.made}

        def gone() -> bool | None:
            left = [n for n in names if self.pods_of(n)]
            return True if not left else None

        poll("the test's pods gone", gone, 60)
        delete_evict_events(self.plane, self.namespace)
        self.made.clear()


def group_of(plane: ControlPlane, namespace: str, pod: str) -> dict[str, Any]:
    """The PodGroup KAI's podgrouper made for the pod `pod` (its `pod-group-name` annotation)."""
    admin = Seeder(plane.admin())

    def made() -> dict[str, Any] | None:
        found = admin.read("v1", "Pod", pod, namespace)
        name = (((found or {}).get("metadata") or {}).get("annotations") or {}).get(
            GROUP_ANNOTATION
        )
        group = admin.read(kai.PODGROUP_API, "PodGroup", name, namespace) if name else None
        return dict(group) if group else None

    return poll(f"the PodGroup of {namespace}/{pod}", made, 60)


def scheduling_reasons(group: dict[str, Any]) -> list[dict[str, Any]]:
    """Every `reasons[]` entry of the PodGroup's scheduling conditions, as KAI wrote them."""
    conditions = (group.get("status") or {}).get("schedulingConditions") or []
    return [dict(r) for c in conditions for r in c.get("reasons") or []]


def wait_scheduling_condition(
    plane: ControlPlane, namespace: str, pod: str, deadline_s: float = 90
) -> dict[str, Any]:
    """Poll until KAI's scheduler wrote why the pod's PodGroup is not scheduled; the group."""

    def written() -> dict[str, Any] | None:
        plane.check_alive()
        group = group_of(plane, namespace, pod)
        return group if scheduling_reasons(group) else None

    return poll(f"KAI's scheduling condition on {namespace}/{pod}", written, deadline_s)


def evict_events(plane: ControlPlane, namespace: str) -> list[dict[str, Any]]:
    listed = client.CoreV1Api(plane.admin()).list_namespaced_event(
        namespace, field_selector="reason=Evict"
    )
    return [plane.admin().sanitize_for_serialization(e) for e in listed.items]


def wait_evict_event(
    plane: ControlPlane, namespace: str, action: str, deadline_s: float = 90
) -> dict[str, Any]:
    """Poll until KAI's scheduler recorded an Evict Event of `action` in `namespace`."""

    def recorded() -> dict[str, Any] | None:
        plane.check_alive()
        for event in evict_events(plane, namespace):
            notes = event["metadata"].get("annotations") or {}
            if notes.get("evictor-action-type") == action:
                return event
        return None

    return poll(f"an Evict Event ({action}) in {namespace}", recorded, deadline_s)


def delete_evict_events(plane: ControlPlane, namespace: str) -> None:
    core = client.CoreV1Api(plane.admin())
    for event in evict_events(plane, namespace):
        try:
            core.delete_namespaced_event(event["metadata"]["name"], namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
