"""Raw HTTP with the bot's own ServiceAccount token (or the admin's), and the objects to act on.

The RBAC and admission tests (test_rbac.py, test_admission.py) send requests as the bot sends
them: JSON merge patches (`application/merge-patch+json`, what bot/kube/gateway.py
`patch_object` sends), plain POSTs and DELETEs, with no client library in between to reshape
a body or a refusal. An answer keeps the server's status and its own message.

The objects are the smallest that the upstream CRDs (tests/cluster/crds.py) accept, each with a
unique name so that a test never meets another's leftovers; `Seeder` creates them as the admin
and deletes them when the test ends.
"""

from __future__ import annotations

import json
import secrets
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from controlplane import ControlPlane

BOT_USER = "system:serviceaccount:kai-chatops:kai-chatops"
MERGE = "application/merge-patch+json"
JSON = "application/json"


def token_in(kubeconfig: Path) -> str:
    """The bearer token a kubeconfig written by ControlPlane.write_kubeconfig holds."""
    config = yaml.safe_load(kubeconfig.read_text())
    return str(config["users"][0]["user"]["token"])


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # the parsed JSON, or the text when it is not JSON (pods/log)

    @property
    def message(self) -> str:
        """A Status's message (what kubectl prints after `Error from server`)."""
        return str(self.body.get("message", "")) if isinstance(self.body, dict) else str(self.body)


@dataclass
class Caller:
    """One identity's requests to the control plane: the bot's token, or the admin's."""

    plane: ControlPlane
    token: str

    def __call__(
        self, method: str, path: str, body: Any = None, content_type: str = JSON
    ) -> Answer:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": JSON}
        if data is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(
            f"{self.plane.url}{path}", data=data, headers=headers, method=method
        )
        context = ssl.create_default_context(cafile=str(self.plane.ca_file))
        try:
            with urllib.request.urlopen(request, timeout=15, context=context) as r:
                return Answer(int(r.status), parse(r.read()))
        except urllib.error.HTTPError as e:
            return Answer(e.code, parse(e.read()))

    def patch(self, path: str, body: Any) -> Answer:
        return self("PATCH", path, body, MERGE)


def parse(data: bytes) -> Any:
    try:
        return json.loads(data or b"{}")
    except ValueError:
        return data.decode("utf-8", "replace")


def bot_caller(plane: ControlPlane) -> Caller:
    return Caller(plane, token_in(plane.bot_kubeconfig))


def admin_caller(plane: ControlPlane) -> Caller:
    return Caller(plane, plane.admin_token)


# ------------------------------------------------------------------------------- the objects
@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str, name: str | None = None, sub: str | None = None) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        path = f"{root}/namespaces/{namespace}/{self.plural}"
        return path + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


SCALED_JOB = Kind("keda.sh", "v1alpha1", "scaledjobs", "ScaledJob")
SCALED_OBJECT = Kind("keda.sh", "v1alpha1", "scaledobjects", "ScaledObject")
HELM_RELEASE = Kind("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease")
KUSTOMIZATION = Kind("kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization")
GIT_REPOSITORY = Kind("source.toolkit.fluxcd.io", "v1", "gitrepositories", "GitRepository")
HELM_REPOSITORY = Kind("source.toolkit.fluxcd.io", "v1", "helmrepositories", "HelmRepository")
APPLICATION = Kind("argoproj.io", "v1alpha1", "applications", "Application")
CONFIG_MAP = Kind("", "v1", "configmaps", "ConfigMap")
LEASE = Kind("coordination.k8s.io", "v1", "leases", "Lease")

KEDA_NS = "annia"  # keda.namespaces in deploy/overlays/socket-mode/config.yaml
FLUX_NS = "flux-system"
ARGO_NS = "argocd"
BOT_NS = "kai-chatops"

# Annotations set by someone else before the bot comes: the bot must leave them alone.
FOREIGN = {"team": "platform"}
CRON = {"timezone": "UTC", "start": "0 * * * *", "end": "30 * * * *", "desiredReplicas": "1"}


def spec_of(kind: Kind) -> dict[str, Any]:
    """The smallest spec the upstream CRD accepts, shaped as a team writes it."""
    if kind is SCALED_JOB:
        container = {"name": "train", "image": "registry.example/train:1"}
        return {
            "maxReplicaCount": 4,
            "pollingInterval": 30,
            "jobTargetRef": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [container]}}
            },
            "triggers": [{"type": "cron", "metadata": CRON}],
        }
    if kind is SCALED_OBJECT:
        return {
            "scaleTargetRef": {"name": "inference"},
            "minReplicaCount": 1,
            "maxReplicaCount": 8,
            "triggers": [{"type": "cron", "metadata": CRON}],
        }
    if kind is HELM_RELEASE:
        return {
            "interval": "10m",
            "chart": {
                "spec": {
                    "chart": "kai-scheduler",
                    "version": "0.12.0",
                    "sourceRef": {"kind": "HelmRepository", "name": "nvidia"},
                }
            },
            "values": {"replicas": 1},
        }
    if kind is KUSTOMIZATION:
        return {
            "interval": "10m",
            "path": "./clusters/gpu",
            "prune": False,
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        }
    if kind is GIT_REPOSITORY:
        return {
            "interval": "5m",
            "url": "https://github.com/example/fleet",
            "ref": {"branch": "main"},
        }
    if kind is HELM_REPOSITORY:
        return {"interval": "1h", "url": "https://helm.ngc.nvidia.com/nvidia"}
    if kind is APPLICATION:
        return {
            "project": "default",
            "source": {
                "repoURL": "https://github.com/example/apps",
                "path": "kai",
                "targetRevision": "HEAD",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "kai"},
            "syncPolicy": {"syncOptions": ["ServerSideApply=true"], "retry": {"limit": 2}},
        }
    raise AssertionError(f"no spec for {kind.kind}")


NAMESPACE_OF = {
    SCALED_JOB: KEDA_NS,
    SCALED_OBJECT: KEDA_NS,
    HELM_RELEASE: FLUX_NS,
    KUSTOMIZATION: FLUX_NS,
    GIT_REPOSITORY: FLUX_NS,
    HELM_REPOSITORY: FLUX_NS,
    APPLICATION: ARGO_NS,
}


@dataclass
class Seeder:
    """Creates objects as the admin under unique names; `cleanup()` deletes them all."""

    plane: ControlPlane
    created: list[str] = field(default_factory=list)  # the paths to delete

    def make(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        annotations: dict[str, str] | None = None,
        spec: dict[str, Any] | None = None,
        prefix: str = "t",
    ) -> dict[str, Any]:
        """A new object of `kind` with the FOREIGN annotations (and `annotations`), as stored."""
        namespace = namespace or NAMESPACE_OF[kind]
        name = f"{prefix}-{kind.plural[:-1]}-{secrets.token_hex(3)}"
        obj = {
            "apiVersion": kind.api_version,
            "kind": kind.kind,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {"app.kubernetes.io/name": name},
                "annotations": {**FOREIGN, **(annotations or {})},
            },
            "spec": spec if spec is not None else spec_of(kind),
        }
        return self.create(kind, obj)

    def create(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        namespace = obj["metadata"]["namespace"]
        answer = admin_caller(self.plane)("POST", kind.path(namespace), obj)
        assert answer.status == 201, answer.message
        self.created.append(kind.path(namespace, obj["metadata"]["name"]))
        stored: dict[str, Any] = answer.body
        return stored

    def forget_later(self, path: str) -> None:
        """Delete what is at `path` (created by the bot, say) when the test ends."""
        self.created.append(path)

    def cleanup(self) -> None:
        admin = admin_caller(self.plane)
        for path in reversed(self.created):
            # Finalizers would hold the delete: none of ours has any, but clear them anyway.
            admin.patch(path, {"metadata": {"finalizers": None}})
            answer = admin("DELETE", path)
            assert answer.status in (200, 202, 404), answer.message
        self.created.clear()


def path_of(kind: Kind, obj: dict[str, Any], sub: str | None = None) -> str:
    return kind.path(obj["metadata"]["namespace"], obj["metadata"]["name"], sub)
