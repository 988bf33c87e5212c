"""deploy/chart: `helm lint`, and `helm template` of each mode, held to the kustomize overlay of
the same install object by object, then applied to the real API server (server-side dry run).

helm is built from helm.sh/helm/v4 and cached like the control plane (cluster_build.py). The only
differences allowed: the ConfigMap's name (kustomize adds a content hash; the chart rolls the
pods by a checksum annotation instead) and its config.yaml compared as YAML (the overlay's file
keeps its comments).
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cluster_build as build
import pytest
import yaml
from controlplane import ControlPlane
from deploy_render import DEPLOY, TEAM_IMAGE, keda_rbac, team_overlay

from bot.config import settings

CHART = DEPLOY / "chart"
OVERLAYS = DEPLOY / "overlays"
CONFIG_MAP = "kai-chatops-config"
CHECKSUM = "checksum/config"
# `helm template` of the chart as it is installed: release kai-chatops in its namespace.
TEMPLATE = ("template", "kai-chatops", str(CHART), "-n", "kai-chatops")
Key = tuple[str, str | None, str]


@dataclass(frozen=True)
class Mode:
    """One install: the overlay (and extra components) and the chart values that match it."""

    overlay: str
    values: dict[str, Any]
    components: tuple[str, ...] = ()
    config: str = ""  # the overlay whose config.yaml it uses, when it has none

    def config_of(self) -> dict[str, Any]:
        source = self.config or self.overlay
        loaded: dict[str, Any] = yaml.safe_load((OVERLAYS / source / "config.yaml").read_text())
        return loaded


BOTH = {"gitops": {"flux": True, "argocd": True}}
LEGACY = {
    "enabled": True,
    "legacy": True,
    "users": ["alice@example.com"],
    "groups": ["slack:oncall"],
}
MODES = {
    "socket": Mode("socket-mode", BOTH),
    "http": Mode("http-mode", {**BOTH, "mode": "http"}, config="socket-mode"),
    "flux-only": Mode("flux-only", {"gitops": {"flux": True, "argocd": False}}),
    "argo-only": Mode("argo-only", {"gitops": {"flux": False, "argocd": True}}),
    "impersonation": Mode(
        "socket-mode", {**BOTH, "impersonation": {"enabled": True}}, ("impersonation",)
    ),
    "impersonation-legacy": Mode(
        "socket-mode", {**BOTH, "impersonation": LEGACY}, ("impersonation/legacy",)
    ),
    # The rules' and the dashboard's own `{{ }}` come out of Helm as they are in the component.
    "monitoring": Mode("socket-mode", {**BOTH, "monitoring": {"enabled": True}}, ("monitoring",)),
}


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The helm command, with its cache and config kept out of the user's home."""
    if not build.helm_bin().is_file():
        if not build.go_available():
            pytest.skip("Go is not installed: helm is built from helm.sh/helm/v4 with it")
        build.build(only=["helm"])
    home = tmp_path_factory.mktemp("helm-home")
    homes = [
        f"{var}={home / var.lower()}"
        for var in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME")
    ]
    yield ["env", *homes, str(build.helm_bin())]


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def values_file(directory: Path, mode: Mode) -> Path:
    values = {**copy.deepcopy(mode.values), "namespace": {"create": True}}
    values["config"] = mode.config_of()
    path = directory / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def helm_template(helm: list[str], values: Path, *extra: str) -> list[dict[str, Any]]:
    done = run([*helm, *TEMPLATE, "-f", str(values), *extra])
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def overlay_of(directory: Path, mode: Mode) -> Path:
    """The overlay itself, or one made of it and the mode's extra components."""
    if not mode.components:
        return OVERLAYS / mode.overlay
    directory.mkdir()
    relative = os.path.relpath(DEPLOY, directory)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [f"{relative}/overlays/{mode.overlay}"],
        "components": [f"{relative}/components/{c}" for c in mode.components],
    }
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return directory


def kustomize(directory: Path) -> list[dict[str, Any]]:
    done = run([str(build.bin_dir() / "kustomize"), "build", str(directory)])
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def comparable(objects: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Each object by kind, namespace and name, less the two allowed differences."""
    found: dict[Key, dict[str, Any]] = {}
    for original in objects:
        obj = copy.deepcopy(original)
        meta = obj["metadata"]
        if obj["kind"] == "ConfigMap" and meta["name"].startswith(CONFIG_MAP):
            meta["name"] = CONFIG_MAP
            obj["data"] = {k: yaml.safe_load(v) for k, v in obj["data"].items()}
        if obj["kind"] == "Deployment":
            pod = obj["spec"]["template"]
            annotations = pod["metadata"].pop("annotations", {})
            assert set(annotations) <= {CHECKSUM}
            for volume in pod["spec"]["volumes"]:
                if "configMap" in volume:
                    volume["configMap"]["name"] = re.sub(
                        rf"^{CONFIG_MAP}-[a-z0-9]{{10}}$", CONFIG_MAP, volume["configMap"]["name"]
                    )
        key = (obj["kind"], meta.get("namespace"), meta["name"])
        assert key not in found, f"{key} twice"
        found[key] = obj
    return found


@pytest.mark.parametrize("name", list(MODES))
def test_each_mode_renders_what_its_overlay_renders_object_by_object(
    helm: list[str], tmp_path: Path, name: str
) -> None:
    mode = MODES[name]
    chart = comparable(helm_template(helm, values_file(tmp_path, mode)))
    wanted = comparable(kustomize(overlay_of(tmp_path / "overlay", mode)))
    assert sorted(chart, key=str) == sorted(wanted, key=str)
    for key, obj in wanted.items():
        assert chart[key] == obj, f"{key} differs between the chart and the overlay"


def test_two_keda_namespaces_get_the_roles_make_keda_rbac_writes_for_an_overlay(
    helm: list[str], tmp_path: Path
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["gpu-a", "gpu-b"])
    assert keda_rbac.main([str(overlay)]) == 0
    repository, tag = TEAM_IMAGE
    values = {
        "image": {"repository": repository, "tag": tag},
        "gitops": {"flux": True, "argocd": False},
        "namespace": {"create": True},
        "config": yaml.safe_load((overlay / "config.yaml").read_text()),
    }
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    chart = comparable(helm_template(helm, tmp_path / "values.yaml"))
    assert chart == comparable(kustomize(overlay))
    # With impersonation, a person's patch is bound where the bot changes things: the same two.
    impersonating = helm_template(
        helm, tmp_path / "values.yaml", "--set", "impersonation.enabled=true"
    )
    bound = {
        o["metadata"]["namespace"]
        for o in impersonating
        if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "kai-chatops-impersonate-on"
    }
    assert bound == {"gpu-a", "gpu-b", "flux-system"}


def test_a_new_config_rolls_the_pods(helm: list[str], tmp_path: Path) -> None:
    values = values_file(tmp_path, MODES["socket"])

    def rendered(*flags: str) -> tuple[str, dict[str, Any]]:
        objects = helm_template(helm, values, *flags)
        [deployment] = [o for o in objects if o["kind"] == "Deployment"]
        [configmap] = [o for o in objects if o["kind"] == "ConfigMap"]
        checksum = deployment["spec"]["template"]["metadata"]["annotations"][CHECKSUM]
        return checksum, yaml.safe_load(configmap["data"]["config.yaml"])

    before, _ = rendered()
    after, config = rendered("--set", "config.alerts.hold=2m")
    assert config["alerts"]["hold"] == "2m"
    assert after != before
    assert rendered("--set", "replicas=3")[0] == before, "only the config rolls them"


def test_helm_lint_finds_nothing_in_either_mode(helm: list[str], tmp_path: Path) -> None:
    for name in ("socket", "http"):
        (tmp_path / name).mkdir()
        values = values_file(tmp_path / name, MODES[name])
        done = run([*helm, "lint", "--strict", str(CHART), "-n", "kai-chatops", "-f", str(values)])
        assert done.returncode == 0, done.stdout + done.stderr
        assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--set", "mode=grpc"], "mode"),
        (["-n", "default"], 'the release\'s namespace is "default": install into kai-chatops'),
        (["--set", "config.lease.name=other"], 'config.lease.name: "other", expected'),
        (
            ["--set", "impersonation.enabled=true", "--set", "impersonation.legacy=true"],
            "legacy impersonation needs both listed",
        ),
    ],
    ids=["unknown-mode", "other-namespace", "other-lease", "legacy-unnamed"],
)
def test_bad_values_are_refused_with_one_clear_line_and_nothing_rendered(
    helm: list[str], flags: list[str], said: str
) -> None:
    done = run([*helm, *TEMPLATE, *flags])
    assert done.returncode != 0
    assert said in done.stderr
    assert done.stdout == ""


def test_every_object_of_the_chart_is_accepted_by_the_real_api_server(
    helm: list[str], control_plane: ControlPlane, tmp_path: Path
) -> None:
    # HTTP mode with constrained impersonation: every template the chart has but the legacy grant.
    mode = Mode(
        "http-mode",
        {**BOTH, "mode": "http", "impersonation": {"enabled": True}},
        config="socket-mode",
    )
    objects = helm_template(helm, values_file(tmp_path, mode))
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "Ingress", "ValidatingAdmissionPolicy", "ClusterRole"} <= kinds
    for obj in objects:
        stored = control_plane.apply(obj, dry_run=True)
        assert stored.metadata.name == obj["metadata"]["name"]


def chart_values(example: list[dict[str, Any]]) -> dict[str, Any]:
    """The values a GitOps example gives the chart (Flux's HelmRelease, Argo CD's Application)."""
    for doc in example:
        if doc["kind"] == "HelmRelease":
            assert doc["spec"]["chart"]["spec"]["chart"] == "./deploy/chart"
            values: dict[str, Any] = doc["spec"]["values"]
            return values
        if doc["kind"] == "Application":
            assert doc["spec"]["source"]["path"] == "deploy/chart"
            assert doc["spec"]["destination"]["namespace"] == "kai-chatops"
            values = doc["spec"]["source"]["helm"]["valuesObject"]
            return values
    raise AssertionError("no HelmRelease or Application")


@pytest.mark.parametrize("example", ["flux-helmrelease.yaml", "argocd-application-helm.yaml"])
def test_the_gitops_examples_install_the_chart_with_values_it_renders_and_the_bot_reads(
    helm: list[str], control_plane: ControlPlane, tmp_path: Path, example: str
) -> None:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "gitops" / example).read_text()) if d]
    for doc in docs:  # the CRDs' own schemas judge them
        control_plane.apply(doc, dry_run=True)
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(chart_values(docs)))
    objects = helm_template(helm, values)
    [configmap] = [o for o in objects if o["kind"] == "ConfigMap"]
    loaded = settings.parse_settings(yaml.safe_load(configmap["data"]["config.yaml"]))
    assert loaded.keda.namespaces == ("annia",)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/kai-chatops:0.2.0"


def test_helm_installs_upgrades_and_uninstalls_the_bots_grants_on_a_real_api_server(
    helm: list[str], bare: ControlPlane, tmp_path: Path
) -> None:
    # A cluster with KAI Scheduler, KEDA, Flux, Argo CD and a team namespace; the release's own.
    for namespace in ("kai-chatops", "annia", "gpu-b", "flux-system", "argocd"):
        bare.ensure_namespace(namespace)
    release = [*helm, "--kubeconfig", str(bare.admin_kubeconfig), "-n", "kai-chatops"]
    values = values_file(tmp_path, MODES["socket"])
    # The namespace exists already (helm stores the release there): the chart does not make it.
    install = run(
        [*release, "install", "kai-chatops", str(CHART), "-f", str(values),
         "--set", "namespace.create=false"]
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    assert "STATUS: deployed" in install.stdout
    assert bare.bot_may("patch", "keda.sh", "scaledjobs", "annia")
    assert bare.bot_may("patch", "helm.toolkit.fluxcd.io", "helmreleases", "flux-system")
    assert not bare.bot_may("patch", "keda.sh", "scaledjobs", "gpu-b")
    upgrade = run(
        [*release, "upgrade", "kai-chatops", str(CHART), "-f", str(values),
         "--set-json", 'config.keda.namespaces=["annia","gpu-b"]',
         "--set", "gitops.flux=false", "--set", "namespace.create=false"]
    )  # fmt: skip
    assert upgrade.returncode == 0, upgrade.stderr
    assert bare.bot_may("patch", "keda.sh", "scaledjobs", "gpu-b")
    assert not bare.bot_may("patch", "helm.toolkit.fluxcd.io", "helmreleases", "flux-system")
    uninstall = run([*release, "uninstall", "kai-chatops"])
    assert uninstall.returncode == 0, uninstall.stderr
    assert not bare.bot_may("patch", "keda.sh", "scaledjobs", "annia")
    assert not bare.bot_may("list", "kai.scheduler", "configs", None)
