"""KEDA v2.21.0 for real: its operator reconciling ScaledJobs and ScaledObjects, its metrics
adapter serving `external.metrics.k8s.io` behind the real APIService.

Both run on this host with the admin's kubeconfig. What the chart installs is applied as the
admin, under the Helm chart's names (the ones the bot's docs use): the `keda-operator` and
`keda-operator-metrics-apiserver` Deployments (placeholders whose pods run on kwok nodes: the
bot's diagnosis reads them), the Service in front of the adapter and the APIService (as
kedacore/keda config/metrics-server/{service,api_service}.yaml, with the CA in `caBundle`).

The aggregator routes to the Service's EndpointSlice, which kube-controller-manager makes from the
adapter's pod; the API server refuses a loopback address there, so the pod uses the host network
of kwok nodes whose IP is a veth address of this host (`ControlPlane.kwok_node_ip`), and the real
adapter listens on that address. Stop the adapter and the aggregator says so itself.

Run time, from KEDA's source: the operator exits unless `WATCH_NAMESPACE` is set (empty: all;
pkg/util/env_resolver.go `GetWatchNamespaces`), reads `KEDA_CLUSTER_OBJECT_NAMESPACE` and
`POD_NAMESPACE`, serves its gRPC metrics service with the certificates in `--cert-dir` (`ca.crt`,
`tls.crt`, `tls.key`: pkg/metricsservice/server.go), which the adapter also uses as a client
(`--metrics-service-grpc-authority` names the host it checks). Leader election is off by default
(cmd/operator/main.go `--leader-elect`); the webhooks are a third binary, not run (nothing here
depends on them: they only validate what is created).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controlplane import ControlPlane, Process, free_port

from upstream import pki

NAMESPACE = "keda"
OPERATOR = "keda-operator"
ADAPTER = "keda-operator-metrics-apiserver"
APISERVICE = "v1beta1.external.metrics.k8s.io"
ADAPTER_PORT = 6443
VERSION = "2.21.0"
GRPC_AUTHORITY = f"{OPERATOR}.{NAMESPACE}.svc.cluster.local"


def certificates(directory: Path, adapter_ip: str) -> pki.Pair:
    """KEDA's certificate directory (`ca.crt`, `tls.crt`, `tls.key`): one leaf for the
    operator's gRPC service and the adapter's HTTPS, as KEDA's own rotation makes it."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = pki.make_ca(directory, "ca")
    names = tuple(
        f"{service}{suffix}"
        for service in (OPERATOR, ADAPTER)
        for suffix in ("", f".{NAMESPACE}", f".{NAMESPACE}.svc", f".{NAMESPACE}.svc.cluster.local")
    )
    pki.make_leaf(directory, "tls", ca, OPERATOR, (*names, "localhost"), ("127.0.0.1", adapter_ip))
    return ca


def _deployment(name: str, image: str, *, host_port: int | None = None) -> dict[str, Any]:
    labels = {"app": name, "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "keda"}
    container: dict[str, Any] = {"name": name, "image": f"ghcr.io/kedacore/{image}:{VERSION}"}
    pod: dict[str, Any] = {"containers": [container]}
    if host_port is not None:
        container["ports"] = [{"containerPort": host_port, "name": "https"}]
        pod["hostNetwork"] = True
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


def chart_objects(ca: pki.Pair) -> list[dict[str, Any]]:
    """The Deployments (placeholders), the adapter's Service and the APIService."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": ADAPTER, "namespace": NAMESPACE, "labels": {"app": ADAPTER}},
        "spec": {
            "selector": {"app": ADAPTER},
            "ports": [{"name": "https", "port": 443, "targetPort": ADAPTER_PORT}],
        },
    }
    apiservice = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": APISERVICE, "labels": {"app.kubernetes.io/part-of": "keda"}},
        "spec": {
            "service": {"name": ADAPTER, "namespace": NAMESPACE, "port": 443},
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "caBundle": ca.b64(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    return [
        _deployment(OPERATOR, "keda"),
        _deployment(ADAPTER, "keda-metrics-apiserver", host_port=ADAPTER_PORT),
        service,
        apiservice,
    ]


def _env(kubeconfig: Path) -> dict[str, str]:
    return {
        "KUBECONFIG": str(kubeconfig),
        "WATCH_NAMESPACE": "",
        "POD_NAMESPACE": NAMESPACE,
        "KEDA_CLUSTER_OBJECT_NAMESPACE": NAMESPACE,
    }


def start_operator(
    plane: ControlPlane, binary: Path, kubeconfig: Path, cert_dir: Path
) -> tuple[Process, int]:
    """The operator on loopback ports; returns it and its gRPC metrics service's port."""
    grpc = free_port()
    process = plane.spawn(
        "keda-operator",
        [
            str(binary),
            f"--cert-dir={cert_dir}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}",
            f"--metrics-service-bind-address=127.0.0.1:{grpc}",
            "--leader-elect=false",
            "--zap-log-level=info",
        ],
        env=_env(kubeconfig),
    )
    return process, grpc


def start_adapter(
    plane: ControlPlane,
    binary: Path,
    kubeconfig: Path,
    cert_dir: Path,
    address: str,
    grpc_port: int,
) -> Process:
    """The metrics adapter with the flags of KEDA's config/metrics-server/deployment.yaml,
    listening on `address` (the adapter pod's IP), the admin's kubeconfig for its lister and
    for delegated authentication and authorization."""
    return plane.spawn(
        "keda-adapter",
        [
            str(binary),
            f"--bind-address={address}",
            f"--secure-port={ADAPTER_PORT}",
            f"--cert-dir={cert_dir}",
            f"--client-ca-file={cert_dir / 'ca.crt'}",
            f"--tls-cert-file={cert_dir / 'tls.crt'}",
            f"--tls-private-key-file={cert_dir / 'tls.key'}",
            f"--lister-kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--metrics-service-address=127.0.0.1:{grpc_port}",
            f"--metrics-service-grpc-authority={GRPC_AUTHORITY}",
            f"--port={free_port()}",
            "--zap-log-level=info",
        ],
        env=_env(kubeconfig),
    )


def scaled_job(name: str, namespace: str) -> dict[str, Any]:
    """A ScaledJob KEDA can make ready without any outside system: its trigger counts pods
    (the `kubernetes-workload` scaler) that no pod matches, so KEDA never starts a Job."""
    container = {"name": "worker", "image": "busybox", "command": ["true"]}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "jobTargetRef": {
                "template": {"spec": {"containers": [container], "restartPolicy": "Never"}}
            },
            "pollingInterval": 30,
            "maxReplicaCount": 2,
            "triggers": [
                {
                    "type": "kubernetes-workload",
                    "metadata": {"podSelector": f"kai-chatops-upstream={name}", "value": "1"},
                }
            ],
        },
    }


def scaled_object(name: str, namespace: str, target: str) -> dict[str, Any]:
    """A ScaledObject of the Deployment `target`, its trigger the same pod count as
    `scaled_job`'s (no pod matches: one replica, the minimum)."""
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"name": target},
            "pollingInterval": 30,
            "minReplicaCount": 1,
            "maxReplicaCount": 2,
            "triggers": [
                {
                    "type": "kubernetes-workload",
                    "metadata": {"podSelector": f"kai-chatops-upstream={name}", "value": "1"},
                }
            ],
        },
    }


def target(name: str, namespace: str) -> dict[str, Any]:
    """A Deployment for a ScaledObject to scale (its pod runs on a kwok node)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            },
        },
    }
