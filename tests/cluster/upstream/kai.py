"""KAI Scheduler v0.12.0 for real: its operator reconciling `kai-config`, then its scheduler,
binder, podgrouper, queue controller and podgroup controller run as the operator configured them.

What the chart (github.com/NVIDIA/KAI-scheduler deployments/kai-scheduler/templates) installs is
applied as the admin: its PriorityClasses (read from the module at the pinned version), the
`kai-operator` Deployment (a placeholder: its pod runs on a kwok node, the operator itself on
this host), `kai-config` with the chart's defaults and the webhooks off (they are FailurePolicy
Fail and would refuse every pod and Queue here: `admission.service.enabled`,
`queueController.webhooks.enableValidation`, `podGroupController.webhooks.enableValidation`
false), the SchedulingShard `default` and the default Queues. The operator then builds its operand
Deployments (pods on kwok nodes, scheduled by kube-scheduler, made available by the deployment
controller: KAI's `Available` is real), and each operand runs here with the arguments the operator
wrote into its Deployment (pkg/operator/operands/*/resources.go `buildArgsList`), its listen
addresses moved to free loopback ports and the scheduler's config file taken from the ConfigMap
the operator made (pkg/operator/operands/scheduler/resources_for_shard.go `configMapForShard`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from controlplane import ControlPlane, ControlPlaneError, Process, free_port, poll
from seeding import Seeder

NAMESPACE = "kai-scheduler"
SCHEDULER_NAME = "kai-scheduler"
SHARD = "default"
CONFIG = ("kai.scheduler/v1", "Config", "kai-config")
SHARD_KIND = ("kai.scheduler/v1", "SchedulingShard", SHARD)
QUEUE_API = "scheduling.run.ai/v2"
PODGROUP_API = "scheduling.run.ai/v2alpha2"
VERSION = "v0.12.0"
REGISTRY = "ghcr.io/nvidia/kai-scheduler"
# Operand Deployment (pkg/operator/operands/*/resources.go names) -> the binary it runs.
OPERANDS = {
    f"{SCHEDULER_NAME}-{SHARD}": "kai-scheduler",
    "binder": "kai-binder",
    "pod-grouper": "kai-podgrouper",
    "queue-controller": "kai-queuecontroller",
    "podgroup-controller": "kai-podgroupcontroller",
}
# What each operand binary listens on (its --help; defaults are every address): moved to free
# loopback ports, whether or not the operator's args name them. A port-only flag is `(flag, "")`.
LISTENS = {
    "kai-scheduler": (("--listen-address", "127.0.0.1:"), ("--plugin-server-port", "")),
    "kai-binder": (
        ("--metrics-bind-address", "127.0.0.1:"),
        ("--health-probe-bind-address", "127.0.0.1:"),
    ),
    "kai-podgrouper": (
        ("--metrics-bind-address", "127.0.0.1:"),
        ("--health-probe-bind-address", "127.0.0.1:"),
    ),
    "kai-queuecontroller": (("--metrics-listen-address", "127.0.0.1:"),),
    "kai-podgroupcontroller": (
        ("--metrics-bind-address", "127.0.0.1:"),
        ("--health-probe-bind-address", "127.0.0.1:"),
    ),
}
# The queue and podgroup controllers serve their validating webhooks whatever kai-config says
# (cmd/queuecontroller/app/options.go `--enable-webhook`, cmd/podgroupcontroller/app/options.go
# `--enable-podgroup-webhook`, both default true), from certificates the operator mounts at
# /tmp/k8s-webhook-server/serving-certs. With the webhooks off in kai-config no
# ValidatingWebhookConfiguration sends them anything, so they are not served here.
WEBHOOKS_OFF = {
    "kai-queuecontroller": "--enable-webhook=false",
    "kai-podgroupcontroller": "--enable-podgroup-webhook=false",
}


def chart_objects(module_root: Path) -> list[dict[str, Any]]:
    """What the chart installs besides CRDs, as `helm install` with its default values renders
    it (templates/{priorityclasses,services/operator.yaml,kai-config.yaml,default-shard.yaml,
    default-queue.yaml}); the PriorityClasses read from the module itself."""
    classes = sorted(
        (module_root / "deployments/kai-scheduler/templates/priorityclasses").iterdir()
    )
    objects: list[dict[str, Any]] = [yaml.safe_load(p.read_text()) for p in classes]
    objects += [operator_deployment(), kai_config(), default_shard(), *default_queues()]
    objects += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-resource-reservation"}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": "kai-resource-reservation",
                "namespace": "kai-resource-reservation",
            },
        },
    ]
    return objects


def operator_deployment() -> dict[str, Any]:
    """templates/services/operator.yaml: the operator's Deployment (its pod a placeholder here)."""
    labels = {"app": "kai-operator"}
    container = {"name": "operator", "image": f"{REGISTRY}/operator:{VERSION}"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kai-operator", "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def _service(name: str) -> dict[str, Any]:
    image = {"name": name, "repository": REGISTRY, "tag": VERSION, "pullPolicy": "IfNotPresent"}
    return {"enabled": True, "image": image}


def kai_config(*, prometheus: bool = False) -> dict[str, Any]:
    """templates/kai-config.yaml with the default values, the webhooks off (see the module doc);
    with `prometheus`, `spec.prometheus.enabled` (which needs Prometheus' operator)."""
    spec: dict[str, Any] = {
        "namespace": NAMESPACE,
        "global": {"replicaCount": 1},
        "binder": {"service": _service("binder")},
        "podGrouper": {"service": _service("podgrouper")},
        "podGroupController": {
            "service": _service("podgroupcontroller"),
            "webhooks": {"enableValidation": False},
        },
        "queueController": {
            "service": _service("queuecontroller"),
            "webhooks": {"enableValidation": False},
        },
        "admission": {"service": {**_service("admission"), "enabled": False}},
        "nodeScaleAdjuster": {"service": {**_service("nodescaleadjuster"), "enabled": False}},
        "scheduler": {"service": _service("scheduler")},
    }
    if prometheus:
        spec["prometheus"] = {"enabled": True}
    return {
        "apiVersion": CONFIG[0],
        "kind": CONFIG[1],
        "metadata": {"name": CONFIG[2]},
        "spec": spec,
    }


def default_shard() -> dict[str, Any]:
    """templates/default-shard.yaml."""
    return {
        "apiVersion": SHARD_KIND[0],
        "kind": SHARD_KIND[1],
        "metadata": {"name": SHARD},
        "spec": {"partitionLabelValue": ""},
    }


def queue(
    name: str, *, parent: str | None = None, quota: int = 0, limit: int = -1, weight: int = 1
) -> dict[str, Any]:
    """A Queue as the chart and KAI's docs write one (GPU quota, limit, over-quota weight)."""
    resources = {
        "cpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": 0, "limit": -1, "overQuotaWeight": 1},
        "gpu": {"quota": quota, "limit": limit, "overQuotaWeight": weight},
    }
    spec: dict[str, Any] = {"resources": resources}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": QUEUE_API, "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def default_queues() -> list[dict[str, Any]]:
    """templates/default-queue.yaml with the default values (quota 0, no limit)."""
    return [queue("default-parent-queue"), queue("default-queue", parent="default-parent-queue")]


def workload_queues() -> list[dict[str, Any]]:
    """The tests' queues: `research` (4 GPUs, the kwok node's) split into `annia` and `vision`,
    2 GPUs of quota each, no limit (either may borrow what the other leaves)."""
    return [
        queue("research", quota=4),
        queue("annia", parent="research", quota=2),
        queue("vision", parent="research", quota=2),
    ]


def start_operator(plane: ControlPlane, binary: Path, kubeconfig: Path) -> Process:
    """The operator as the chart's Deployment runs it (templates/services/operator.yaml args),
    on loopback ports; leader election off (the chart's default, global.leaderElection)."""
    return plane.spawn(
        "kai-operator",
        [
            str(binary),
            f"-metrics-bind-address=127.0.0.1:{free_port()}",
            f"-health-probe-bind-address=127.0.0.1:{free_port()}",
            "-leader-elect=false",
            f"-namespace={NAMESPACE}",
        ],
        env={"KUBECONFIG": str(kubeconfig), "WATCH_NAMESPACE": NAMESPACE},
    )


def operand_argv(binary: str, deployment: dict[str, Any], config_file: Path | None) -> list[str]:
    """The operand's container args as the operator wrote them, its listen addresses moved to
    free loopback ports, its webhooks off, the scheduler's `--scheduler-conf` at `config_file`."""
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = [str(a) for a in container.get("args") or []]
    listens = dict(LISTENS.get(binary, ()))
    out: list[str] = []
    i = 0
    while i < len(args):
        flag, eq, _ = args[i].partition("=")
        takes_next = not eq and i + 1 < len(args) and not args[i + 1].startswith("-")
        if flag in listens or flag == "--scheduler-conf":
            i += 2 if takes_next else 1
            continue
        out.append(args[i])
        if takes_next:
            out.append(args[i + 1])
            i += 1
        i += 1
    out += [f"{flag}={host}{free_port()}" for flag, host in listens.items()]
    if binary == "kai-scheduler" and config_file is not None:
        out.append(f"--scheduler-conf={config_file}")
    if binary in WEBHOOKS_OFF:
        out.append(WEBHOOKS_OFF[binary])
    return out


def start_operands(
    plane: ControlPlane, bins: dict[str, Path], kubeconfig: Path, deadline_s: float = 120
) -> list[Process]:
    """Each operand Deployment the operator built, run here with its own arguments."""
    admin = Seeder(plane.admin())

    def built() -> dict[str, dict[str, Any]] | None:
        plane.check_alive()
        found = {n: admin.read("apps/v1", "Deployment", n, NAMESPACE) for n in OPERANDS}
        return None if any(d is None for d in found.values()) else found  # type: ignore[misc]

    deployments = poll("KAI's operand Deployments", built, deadline_s)
    config_file = write_scheduler_config(plane, admin)
    started = []
    for name, binary in OPERANDS.items():
        argv = operand_argv(binary, deployments[name], config_file)
        started.append(
            plane.spawn(
                binary,
                [str(bins[binary]), *argv],
                env={"KUBECONFIG": str(kubeconfig), "NAMESPACE": NAMESPACE},
            )
        )
    return started


def write_scheduler_config(plane: ControlPlane, admin: Seeder) -> Path:
    """The shard's scheduler configuration as the operator wrote it into its ConfigMap."""
    name = f"{SCHEDULER_NAME}-{SHARD}"
    found = poll(
        "the shard scheduler's ConfigMap",
        lambda: admin.read("v1", "ConfigMap", name, NAMESPACE),
        60,
    )
    path = plane.run_dir / "kai" / "scheduler-config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(found["data"]["config.yaml"])
    return path


def conditions_of(obj: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """An object's status conditions by type."""
    items = ((obj or {}).get("status") or {}).get("conditions") or []
    return {str(c["type"]): c for c in items}


def is_healthy(obj: dict[str, Any] | None) -> bool:
    """Deployed, Available and DependenciesFulfilled True at the object's generation."""
    generation = ((obj or {}).get("metadata") or {}).get("generation")
    got = conditions_of(obj)
    return all(
        got.get(t, {}).get("status") == "True"
        and got.get(t, {}).get("observedGeneration") == generation
        for t in ("Deployed", "Available", "DependenciesFulfilled")
    )


def is_rolled_out(deployment: dict[str, Any]) -> bool:
    """The deployment controller has seen the latest spec and every replica is updated and
    available (the operator rewrites its operands in its first reconciles: the scheduler's pod
    template carries the resourceVersion of its ConfigMap, so a new rollout follows)."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    replicas = spec.get("replicas", 1)
    return (
        status.get("observedGeneration") == deployment["metadata"].get("generation")
        and status.get("updatedReplicas", 0) == replicas
        and status.get("availableReplicas", 0) == replicas
        and status.get("replicas", 0) == replicas
    )


def wait_healthy(plane: ControlPlane, deadline_s: float = 180) -> dict[str, Any]:
    """Poll until the operator reports kai-config and the shard healthy and every Deployment in
    KAI's namespace is rolled out; kai-config then.

    Raises:
        ControlPlaneError: not within the deadline (naming the conditions last seen).
    """
    admin = Seeder(plane.admin())
    seen: list[Any] = []

    def healthy() -> dict[str, Any] | None:
        plane.check_alive()
        config = admin.read(*CONFIG)
        shard = admin.read(*SHARD_KIND)
        deployments = admin.dynamic.resources.get(api_version="apps/v1", kind="Deployment")
        listed = deployments.get(namespace=NAMESPACE).to_dict()["items"]
        pending = [d["metadata"]["name"] for d in listed if not is_rolled_out(d)]
        seen[:] = [conditions_of(config), conditions_of(shard), pending]
        settled = is_healthy(config) and is_healthy(shard) and not pending
        return copy.deepcopy(config) if settled else None

    try:
        return poll("kai-config and the shard healthy, as KAI's operator says", healthy, deadline_s)
    except ControlPlaneError as exc:
        raise ControlPlaneError(
            f"{exc}; last seen (conditions of config and shard, Deployments rolling out): {seen}"
        ) from exc


def wait_dependencies(plane: ControlPlane, status: str, deadline_s: float = 60) -> dict[str, Any]:
    """Poll until the operator writes `DependenciesFulfilled` = `status` for kai-config's
    current generation; kai-config then."""
    admin = Seeder(plane.admin())

    def written() -> dict[str, Any] | None:
        plane.check_alive()
        config = admin.read(*CONFIG)
        generation = ((config or {}).get("metadata") or {}).get("generation")
        got = conditions_of(config).get("DependenciesFulfilled", {})
        done = got.get("status") == status and got.get("observedGeneration") == generation
        return copy.deepcopy(config) if done else None

    return poll(f"DependenciesFulfilled {status}, as KAI's operator says", written, deadline_s)
