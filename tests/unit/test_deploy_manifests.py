"""The manifests in deploy/ render, validate against the Kubernetes schemas, and run restricted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from deploy_render import COMPONENTS, DEPLOY, OVERLAYS, ROOT, by_kind, render

from bot.config import settings as config

K8S_VERSION = "1.33.0"


def overlay_id(path: Path) -> str:
    return str(path.relative_to(DEPLOY))


def test_every_overlay_and_component_is_found() -> None:
    assert [p.name for p in OVERLAYS] == ["argo-only", "flux-only", "http-mode", "socket-mode"]
    assert [p.name for p in COMPONENTS] == [
        "argocd",
        "flux",
        "http-mode",
        "impersonation",
        "monitoring",
    ]


@pytest.mark.parametrize("directory", [DEPLOY / "base", *OVERLAYS], ids=overlay_id)
def test_every_kustomization_renders_objects_valid_for_kubernetes(directory: Path) -> None:
    objects = render(directory)
    assert objects
    for obj in objects:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def pod_spec(overlay: Path) -> dict[str, Any]:
    [deployment] = by_kind(render(overlay), "Deployment")
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("overlay", OVERLAYS, ids=overlay_id)
def test_the_pod_satisfies_the_restricted_pod_security_profile(overlay: Path) -> None:
    spec = pod_spec(overlay)
    pod_security = spec["securityContext"]
    assert pod_security["runAsNonRoot"] is True
    assert pod_security.get("runAsUser", 1) != 0
    assert pod_security["seccompProfile"]["type"] == "RuntimeDefault"
    assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC")
    for volume in spec["volumes"]:
        assert set(volume) - {"name"} <= {"configMap", "emptyDir", "secret", "projected"}
    for container in spec["containers"]:
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False
        assert security["readOnlyRootFilesystem"] is True
        assert security["capabilities"]["drop"] == ["ALL"]
        assert not security.get("capabilities", {}).get("add")
        assert not container.get("ports", [{}])[0].get("hostPort")


def test_the_namespace_enforces_the_restricted_profile() -> None:
    [namespace] = by_kind(render(DEPLOY / "base"), "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_the_deployment_runs_two_probed_replicas_with_limits_and_a_grace_period() -> None:
    [deployment] = by_kind(render(DEPLOY / "base"), "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    [container] = spec["containers"]
    assert deployment["spec"]["replicas"] == 2
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert "memory" in container["resources"]["limits"]
    assert spec["terminationGracePeriodSeconds"] >= 25


def test_tokens_come_from_a_secret_reference_and_never_from_git() -> None:
    [deployment] = by_kind(render(DEPLOY / "base"), "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"):
        assert env[name]["valueFrom"]["secretKeyRef"]["name"] == "kai-chatops-slack"
    for path in DEPLOY.rglob("*.yaml"):
        text = path.read_text()
        assert "xoxb-" not in text and "xapp-" not in text, path
    assert not by_kind(render(DEPLOY / "base"), "Secret")


def test_the_pod_disruption_budget_keeps_one_replica() -> None:
    [pdb] = by_kind(render(DEPLOY / "base"), "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1


def test_egress_is_limited_to_the_api_server_https_alertmanager_and_dns() -> None:
    [policy] = by_kind(render(DEPLOY / "base"), "NetworkPolicy")
    ports = {(p["port"], p["protocol"]) for rule in policy["spec"]["egress"] for p in rule["ports"]}
    assert ports == {(443, "TCP"), (6443, "TCP"), (9093, "TCP"), (53, "UDP"), (53, "TCP")}


def test_http_mode_exposes_only_the_slack_endpoint_over_tls_and_socket_mode_nothing() -> None:
    http = render(DEPLOY / "overlays" / "http-mode")
    [ingress] = by_kind(http, "Ingress")
    paths = [p["path"] for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert paths == ["/slack/events"]
    assert ingress["spec"]["ingressClassName"]
    hosts = {rule["host"] for rule in ingress["spec"]["rules"]}
    assert {h for tls in ingress["spec"]["tls"] for h in tls["hosts"]} == hosts
    assert all(tls["secretName"] for tls in ingress["spec"]["tls"])
    for overlay in ("socket-mode", "flux-only", "argo-only"):
        socket = render(DEPLOY / "overlays" / overlay)
        assert not by_kind(socket, "Ingress") and not by_kind(socket, "Service")


@pytest.mark.parametrize("overlay", OVERLAYS, ids=overlay_id)
def test_every_object_carries_the_common_labels(overlay: Path) -> None:
    for obj in render(overlay):
        labels = obj["metadata"].get("labels") or {}
        assert labels.get("app.kubernetes.io/name") == "kai-chatops", obj["metadata"]["name"]
        assert labels.get("app.kubernetes.io/part-of") == "kai-chatops", obj["metadata"]["name"]


@pytest.mark.parametrize(
    ("overlay", "absent"),
    [("flux-only", "argoproj.io"), ("argo-only", "toolkit.fluxcd.io")],
)
def test_a_single_tool_overlay_has_no_role_for_the_tool_it_does_not_run(
    overlay: str, absent: str
) -> None:
    objects = render(DEPLOY / "overlays" / overlay)
    groups = {g for role in by_kind(objects, "Role") for r in role["rules"] for g in r["apiGroups"]}
    assert groups and not any(g.endswith(absent) for g in groups)
    bound = {b["roleRef"]["name"] for b in by_kind(objects, "RoleBinding")}
    assert bound == {role["metadata"]["name"] for role in by_kind(objects, "Role")}


@pytest.mark.parametrize("overlay", OVERLAYS, ids=overlay_id)
def test_each_overlay_mounts_its_own_valid_in_cluster_config(overlay: Path) -> None:
    objects = render(overlay)
    [configmap] = by_kind(objects, "ConfigMap")
    [deployment] = by_kind(objects, "Deployment")
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert {"name": "config", "configMap": {"name": configmap["metadata"]["name"]}} in volumes
    settings = config.parse_settings(yaml.safe_load(configmap["data"]["config.yaml"]))
    assert settings.clusters[0].in_cluster
    assert settings.state.backend == "configmap"
    assert not (DEPLOY / "base" / "config.yaml").exists(), "the config is edited in an overlay"


@pytest.mark.parametrize(
    ("overlay", "kinds"),
    [("flux-only", {"HelmRelease"}), ("argo-only", {"Application"})],
)
def test_a_single_tool_config_points_its_shortcuts_at_that_tool(
    overlay: str, kinds: set[str]
) -> None:
    settings = config.load_settings(str(DEPLOY / "overlays" / overlay / "config.yaml"))
    shortcuts = [settings.gitops.shortcut(name) for name in ("kai", "keda")]
    assert {s.kind for s in shortcuts if s is not None} == kinds


def test_the_gitops_examples_install_an_overlay_that_exists() -> None:
    flux = list(yaml.safe_load_all((DEPLOY / "gitops" / "flux-kustomization.yaml").read_text()))
    [kustomization] = [d for d in flux if d["kind"] == "Kustomization"]
    assert (ROOT / kustomization["spec"]["path"]).is_dir()
    argo = yaml.safe_load((DEPLOY / "gitops" / "argocd-application.yaml").read_text())
    assert argo["kind"] == "Application"
    assert (ROOT / argo["spec"]["source"]["path"] / "kustomization.yaml").is_file()


def test_the_container_image_runs_as_non_root_without_build_tools() -> None:
    lines = (DEPLOY / "Dockerfile").read_text().splitlines()
    stages = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
    final = lines[stages[-1] :]
    assert len(stages) == 2, "a build stage and a slim final stage"
    assert "slim" in lines[stages[-1]]
    assert any(line.startswith("USER 10001") for line in final)
    assert not any("apt-get" in line or "gcc" in line for line in final)
    assert any(".whl" in line for line in final), "the package is installed from the wheel"
