"""Builders of realistic raw objects for the rule and health-report tests.

Shapes follow what the upstream controllers write (docs/keda.md, docs/gitops.md, docs/workloads.md).
Plain functions returning plain dicts, so a test reads as the object it checks.
"""

from __future__ import annotations

from typing import Any

KAI_TIME = "2026-08-10T09:12:41Z"
HEALTHY_MESSAGES = {
    "Reconciling": ("False", "reconciled", "Reconciliation completed successfully"),
    "Deployed": ("True", "deployed", "Resources deployed"),
    "Available": ("True", "available", "System available"),
    "DependenciesFulfilled": ("True", "dependencies_fulfilled", "Dependencies are fulfilled"),
    "Ready": ("True", "ready", "System is ready"),
}
DEPLOYMENT_AVAILABLE = {
    "True": ("MinimumReplicasAvailable", "Deployment has minimum availability.")
}
DEPLOYMENT_UNAVAILABLE = (
    "MinimumReplicasUnavailable",
    "Deployment does not have minimum availability.",
)
DEPS_MISSING_MESSAGE = "\nKAI-prometheus is missing prometheus operator"
ROLLOUT_MESSAGE = (
    "Binder: Deployment [binder] is not available\n"
    "Binder: not available\n"
    "KAIAdmission: Deployment [admission] is not available\n"
    "KAIAdmission: not available"
)


def condition(
    type_: str,
    status: str,
    generation: int | None = None,
    *,
    reason: str = "",
    message: str = "",
    at: str = KAI_TIME,
) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": type_, "status": status, "lastTransitionTime": at}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def kai_conditions(generation: int, at: str = KAI_TIME, **overrides: Any) -> list[dict[str, Any]]:
    """The five KAI conditions, healthy, at `generation`.

    `Available=("False", msg)` changes one, `Ready=None` drops one, `Deployed={...}` replaces one.
    """
    conds = []
    for type_, (status, reason, message) in HEALTHY_MESSAGES.items():
        override = overrides.get(type_, ...)
        if override is None:
            continue
        if isinstance(override, dict):
            conds.append(override)
            continue
        if isinstance(override, tuple):
            status, message = override
            reason = {"Ready": "not_ready", "DependenciesFulfilled": "dependencies_missing"}.get(
                type_, reason
            )
        conds.append(condition(type_, status, generation, reason=reason, message=message, at=at))
    return conds


def kai_object(
    kind: str,
    name: str,
    *,
    generation: int = 3,
    conditions: list[dict[str, Any]] | None = None,
    status: Any = ...,
    spec: dict[str, Any] | None = None,
    created: str = "2026-08-10T09:12:30Z",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kai.scheduler/v1",
        "kind": kind,
        "metadata": {"name": name, "generation": generation, "creationTimestamp": created},
        "spec": spec if spec is not None else {},
    }
    if status is not ...:
        obj["status"] = status
    elif conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


def kai_config(**kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("spec", {"namespace": "kai-scheduler", "global": {"replicaCount": 1}})
    return kai_object("Config", "kai-config", **kwargs)


def shard(name: str = "default", **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("spec", {"partitionLabelValue": "", "goMemLimitRatio": 0.9})
    return kai_object("SchedulingShard", name, **kwargs)


def deployment(
    name: str,
    namespace: str = "kai-scheduler",
    *,
    replicas: int | None = 1,
    updated: int | None = None,
    available: str | None = "True",
    labels: dict[str, str] | None = None,
    operand: bool = True,
) -> dict[str, Any]:
    """A Deployment; `operand` adds KAI's managed-by label, `available` is the condition status."""
    updated = (replicas if replicas is not None else 1) if updated is None else updated
    all_labels = {"app": name, **(labels or {})}
    if operand:
        all_labels["app.kubernetes.io/managed-by"] = "kai-operator"
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}}
    if replicas is not None:
        spec["replicas"] = replicas
    conds = []
    if available is not None:
        reason, message = DEPLOYMENT_AVAILABLE.get(available, DEPLOYMENT_UNAVAILABLE)
        conds.append(condition("Available", available, reason=reason, message=message))
    ready = updated if available == "True" else 0
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "generation": 2, "labels": all_labels},
        "spec": spec,
        "status": {
            "observedGeneration": 2,
            "replicas": updated,
            "updatedReplicas": updated,
            "availableReplicas": ready,
            "readyReplicas": ready,
            "conditions": conds,
        },
    }


def daemonset(
    name: str = "numa-placement-exporter",
    namespace: str = "kai-scheduler",
    *,
    desired: int = 3,
    available: int | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A DaemonSet as KAI's operator builds one (`app=<name>` only, KAI-Scheduler
    pkg/operator/operands/common/common.go `DaemonSetForKAIConfig`), as the list gives it."""
    ready = desired if available is None else available
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "generation": 1,
            "labels": {"app": name, **(labels or {})},
        },
        "spec": {"selector": {"matchLabels": {"app": name}}},
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": desired,
            "updatedNumberScheduled": desired,
            "numberReady": ready,
            "numberAvailable": ready,
        },
    }


RELEASE_SHAPES = ("v0.12", "v0.13", "v0.16", "v0.17")


def release_conditions(
    release: str, generation: int, at: str = KAI_TIME, **overrides: Any
) -> list[dict[str, Any]]:
    """The KAI conditions as `release`'s operator leaves a finished pass: v0.12.0 with no
    `Ready` and `Reconciling` True for good (reason `reconciled`), v0.13.0 and later with
    `Ready` and `Reconciling` False (KAI-Scheduler pkg/operator/controller/status_reconciler/
    status_reconciler.go at each tag)."""
    if release != "v0.12":
        return kai_conditions(generation, at, **overrides)
    forever = condition(
        "Reconciling",
        "True",
        generation,
        reason="reconciled",
        message="Reconciliation completed successfully",
        at=at,
    )
    return kai_conditions(generation, at, **{"Ready": None, "Reconciling": forever, **overrides})


def apiservice(
    status: str | None = "True",
    reason: str = "Passed",
    message: str = "all checks passed",
    service: dict[str, Any] | None = None,
) -> dict[str, Any]:
    conds = (
        [] if status is None else [condition("Available", status, reason=reason, message=message)]
    )
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
        "spec": {
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "service": service
            if service is not None
            else {"name": "keda-operator-metrics-apiserver", "namespace": "keda", "port": 443},
        },
        "status": {"conditions": conds},
    }


def keda_object(
    kind: str,
    name: str,
    namespace: str,
    *,
    annotations: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "generation": 1}
    if annotations is not None:
        metadata["annotations"] = annotations
    obj: dict[str, Any] = {"apiVersion": "keda.sh/v1alpha1", "kind": kind, "metadata": metadata}
    obj["spec"] = {}
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


def scaled_job(**kwargs: Any) -> dict[str, Any]:
    return keda_object("ScaledJob", "annia-worker", "annia", **kwargs)


def scaled_object(**kwargs: Any) -> dict[str, Any]:
    return keda_object("ScaledObject", "checkout-api", "shop", **kwargs)


def keda_conditions(
    kind: str,
    *,
    ready: str | None = "True",
    paused: str | None = "False",
    fallback: str = "False",
    ready_reason: str = "",
    ready_message: str = "",
) -> list[dict[str, Any]]:
    """KEDA's conditions: Ready, Active, Fallback, Paused (a ScaledJob's Fallback stays Unknown)."""
    conds = []
    if ready is not None:
        default_reason = {"True": f"{kind}Ready", "False": "TriggerError"}
        default_message = {
            "True": f"{kind} is defined correctly and is ready for scaling",
            "False": f"Triggers defined in {kind} are not working correctly",
        }
        conds.append(
            condition(
                "Ready",
                ready,
                reason=ready_reason or default_reason.get(ready, "PartialTriggerError"),
                message=ready_message
                or default_message.get(ready, f"Some triggers defined in {kind} are not working"),
            )
        )
    conds.append(condition("Active", "False", reason="ScalerNotActive"))
    if kind == "ScaledObject":
        conds.append(condition("Fallback", fallback, reason="NoFallbackFound"))
    else:
        conds.append(condition("Fallback", "Unknown"))
    if paused is not None:
        reason = f"{kind}Paused" if paused == "True" else f"{kind}Unpaused"
        conds.append(condition("Paused", paused, reason=reason))
    return conds


FLUX_SOURCES = ("GitRepository", "HelmRepository", "OCIRepository", "HelmChart", "Bucket")
FLUX_API = {
    "HelmRelease": "helm.toolkit.fluxcd.io/v2",
    "Kustomization": "kustomize.toolkit.fluxcd.io/v1",
    **{kind: "source.toolkit.fluxcd.io/v1" for kind in FLUX_SOURCES},
}


def flux_object(
    kind: str = "HelmRelease",
    *,
    generation: int = 4,
    observed: int | None = 4,
    suspend: bool | None = None,
    conditions: list[dict[str, Any]] | None = None,
    status_extra: dict[str, Any] | None = None,
    spec_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"interval": "10m", **(spec_extra or {})}
    if suspend is not None:
        spec["suspend"] = suspend
    status: dict[str, Any] = dict(status_extra or {})
    if observed is not None:
        status["observedGeneration"] = observed
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "apiVersion": FLUX_API[kind],
        "kind": kind,
        "metadata": {"name": "podinfo", "namespace": "apps", "generation": generation},
        "spec": spec,
        "status": status,
    }


def application(
    health: str | None = "Healthy", sync: str | None = "Synced", message: str = ""
) -> dict[str, Any]:
    status: dict[str, Any] = {"reconciledAt": "2026-08-24T08:20:04Z"}
    if sync is not None:
        status["sync"] = {"status": sync, "revision": "9c1e0b7d2f4a"}
    if health is not None:
        status["health"] = {"status": health, **({"message": message} if message else {})}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "checkout", "namespace": "argocd"},
        "spec": {"project": "shop"},
        "status": status,
    }


def node(
    name: str = "gpu-node-1",
    *,
    gpus: int | None = 8,
    allocatable: int | None = None,
    ready: str | None = "True",
    conditions: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node as the kubelet and NVIDIA's device plugin write it (`gpus` None: a CPU node)."""
    resources: dict[str, Any] = {"cpu": "128", "memory": "2Ti", "pods": "110"}
    capacity = dict(resources) | ({"nvidia.com/gpu": str(gpus)} if gpus is not None else {})
    left = gpus if allocatable is None else allocatable
    allocated = dict(resources) | ({"nvidia.com/gpu": str(left)} if gpus is not None else {})
    found = list(conditions or [])
    if ready is not None:
        said = "kubelet is posting ready status"
        found.insert(0, condition("Ready", ready, reason="KubeletReady", message=said))
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "resourceVersion": "7", "annotations": dict(annotations or {})},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"capacity": capacity, "allocatable": allocated, "conditions": found},
    }
    return obj


def gpu_pod(
    name: str, node_name: str, gpus: int, *, phase: str = "Running", requests: bool = False
) -> dict[str, Any]:
    """A pod on `node_name` asking for `gpus` nvidia.com/gpu (in limits, as people write it)."""
    where = "requests" if requests else "limits"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "annia"},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "train", "resources": {where: {"nvidia.com/gpu": str(gpus)}}}],
        },
        "status": {"phase": phase},
    }
