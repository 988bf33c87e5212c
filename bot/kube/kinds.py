"""The Kubernetes resource types the bot reads or writes, by group, version and plural.

Pure data: the gateway and the use-cases build API paths from these.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceRef:
    """One served resource type: where it lives in the API and what its objects are called."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`plural.group` as kubectl and RBAC messages name it (`configs.kai.scheduler`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection, or of one object when `name` is given."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace is not None:
            root += f"/namespaces/{namespace}"
        root += f"/{self.plural}"
        return f"{root}/{name}" if name is not None else root


KAI_CONFIG = ResourceRef("kai.scheduler", "v1", "configs", "Config", namespaced=False)
SCHEDULING_SHARD = ResourceRef("kai.scheduler", "v1", "schedulingshards", "SchedulingShard", False)
DEPLOYMENT = ResourceRef("apps", "v1", "deployments", "Deployment", namespaced=True)
# KAI v0.16's NUMA placement exporter: an operand that is a DaemonSet (docs/workloads.md).
DAEMON_SET = ResourceRef("apps", "v1", "daemonsets", "DaemonSet", namespaced=True)
CRD = ResourceRef(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
)
APISERVICE = ResourceRef("apiregistration.k8s.io", "v1", "apiservices", "APIService", False)
SCALED_JOB = ResourceRef("keda.sh", "v1alpha1", "scaledjobs", "ScaledJob", namespaced=True)
SCALED_OBJECT = ResourceRef("keda.sh", "v1alpha1", "scaledobjects", "ScaledObject", True)
# The objects the bot keeps its own state in (alert state, leader election).
LEASE = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
CONFIG_MAP = ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)
# What `/kai diagnose` reads about a Deployment and the Service behind the APIService.
POD = ResourceRef("", "v1", "pods", "Pod", namespaced=True)
REPLICA_SET = ResourceRef("apps", "v1", "replicasets", "ReplicaSet", namespaced=True)
EVENT = ResourceRef("", "v1", "events", "Event", namespaced=True)
SERVICE = ResourceRef("", "v1", "services", "Service", namespaced=True)
ENDPOINT_SLICE = ResourceRef("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True)
# GPU nodes (`/kai nodes`, `cordon`, `uncordon`, the GPU node alert): cluster-scoped.
NODE = ResourceRef("", "v1", "nodes", "Node", namespaced=False)
# Whether a namespace named in a command exists (`/kai pending NAMESPACE`).
NAMESPACE = ResourceRef("", "v1", "namespaces", "Namespace", namespaced=False)
# Flux's Kustomizations (the rest of Flux's kinds: `bot.gitops.kinds`): the alert checks follow
# their applied revisions for `/kai timeline` (`bot.alerts.seen`).
KUSTOMIZATION = ResourceRef(
    "kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization", namespaced=True
)
# What `/kai timeline` reads of rollouts: a DaemonSet's revisions (a Deployment's are ReplicaSets).
CONTROLLER_REVISION = ResourceRef(
    "apps", "v1", "controllerrevisions", "ControllerRevision", namespaced=True
)
# KAI's workload objects (docs/workloads.md): what `/kai queues|pending|why` read.
QUEUE = ResourceRef("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False)
POD_GROUP = ResourceRef("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", namespaced=True)
BIND_REQUEST = ResourceRef("scheduling.run.ai", "v1alpha2", "bindrequests", "BindRequest", True)


def owned_config_map(name: str, namespace: str, data: dict[str, str]) -> dict[str, object]:
    """A ConfigMap of the bot's own state, labelled as managed by kai-chatops, ready to create."""
    return {
        "apiVersion": CONFIG_MAP.api_version,
        "kind": CONFIG_MAP.kind,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "kai-chatops"},
        },
        "data": data,
    }
