"""The KEDA Roles follow keda.namespaces: one place to list them, and a failing test otherwise.

The base names no namespace of your workloads (it applies on a cluster without the demo's
`annia`); each overlay's keda-rbac.yaml holds one Role and RoleBinding per namespace of its
config.yaml, written by `make keda-rbac` (tools/keda_rbac.py) from deploy/templates/rbac-keda.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_render import DEPLOY, OVERLAYS, TEAM_IMAGE, by_kind, keda_rbac, render, team_overlay

from bot.config import settings as config

KEDA_ROLE = "kai-chatops-keda"
BOT = {"kind": "ServiceAccount", "name": "kai-chatops", "namespace": "kai-chatops"}
# What the bot does in a KEDA namespace, and nothing more (tests/e2e/test_deploy_permissions.py
# derives the same from the calls the code makes): pause/resume and its watch, `/kai why`'s pod
# and events.
KEDA_RULES = [
    {
        "apiGroups": ["keda.sh"],
        "resources": ["scaledjobs", "scaledobjects"],
        "verbs": ["get", "list", "patch", "watch"],
    },
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["list"]},
]
# The namespaces of the products the base reads, and its own.
BASE_NAMESPACES = {"kai-chatops", "kai-scheduler", "keda"}


def keda_roles(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        r["metadata"]["namespace"]: r
        for r in by_kind(objects, "Role")
        if r["metadata"]["name"] == KEDA_ROLE
    }


def keda_bindings(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        b["metadata"]["namespace"]: b
        for b in by_kind(objects, "RoleBinding")
        if b["metadata"]["name"] == KEDA_ROLE
    }


def configured_namespaces(objects: list[dict[str, Any]]) -> set[str]:
    [configmap] = by_kind(objects, "ConfigMap")
    settings = config.parse_settings(yaml.safe_load(configmap["data"]["config.yaml"]))
    return set(settings.keda.namespaces)


def test_the_base_names_no_namespace_of_your_workloads() -> None:
    namespaces = {o["metadata"].get("namespace") for o in render(DEPLOY / "base")} - {None}
    assert namespaces == BASE_NAMESPACES
    assert not keda_roles(render(DEPLOY / "base"))


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_each_overlay_has_the_keda_role_in_exactly_the_namespaces_its_config_lists(
    overlay: Path,
) -> None:
    objects = render(overlay)
    listed = configured_namespaces(objects)
    assert listed, "the example overlays let the bot pause somewhere"
    assert set(keda_roles(objects)) == listed
    assert set(keda_bindings(objects)) == listed


def test_every_overlays_keda_rbac_is_what_make_keda_rbac_writes() -> None:
    assert keda_rbac.main(["--check"]) == 0


def test_an_overlay_for_two_keda_namespaces_gives_each_exactly_the_role_the_bot_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["gpu-a", "gpu-b"])
    assert keda_rbac.main([str(overlay)]) == 0
    assert "the KEDA Role and RoleBinding in gpu-a, gpu-b" in capsys.readouterr().out
    objects = render(overlay)
    roles, bindings = keda_roles(objects), keda_bindings(objects)
    assert set(roles) == set(bindings) == {"gpu-a", "gpu-b"}
    for namespace in ("gpu-a", "gpu-b"):
        assert roles[namespace]["rules"] == KEDA_RULES
        assert bindings[namespace]["roleRef"]["name"] == KEDA_ROLE
        assert bindings[namespace]["subjects"] == [BOT]
    named = {o["metadata"].get("namespace") for o in objects}
    assert "annia" not in named
    [deployment] = by_kind(objects, "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == ":".join(TEAM_IMAGE)


def test_a_config_changed_without_make_keda_rbac_is_named_by_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["gpu-a"])
    assert keda_rbac.main([str(overlay)]) == 0
    before = (overlay / "keda-rbac.yaml").read_text()
    settings = yaml.safe_load((overlay / "config.yaml").read_text())
    settings["keda"]["namespaces"] = ["gpu-a", "gpu-b"]
    (overlay / "config.yaml").write_text(yaml.safe_dump(settings))
    capsys.readouterr()
    assert keda_rbac.main(["--check", str(overlay)]) == 1
    err = capsys.readouterr().err
    assert "keda-rbac.yaml: not the Roles of keda.namespaces in" in err
    assert "run `make keda-rbac`" in err
    assert (overlay / "keda-rbac.yaml").read_text() == before, "--check writes nothing"


def test_an_overlay_that_does_not_list_keda_rbac_is_named_by_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["gpu-a"])
    assert keda_rbac.main([str(overlay)]) == 0
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("  - keda-rbac.yaml", "  #"))
    assert keda_rbac.main(["--check", str(overlay)]) == 1
    assert "its resources lack keda-rbac.yaml" in capsys.readouterr().err


def test_a_bad_config_is_refused_with_its_problem_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = team_overlay(tmp_path / "our-team", ["GPU_Jobs"])
    assert keda_rbac.main([str(overlay)]) == 2
    assert "keda.namespaces[0]" in capsys.readouterr().err
    assert not (overlay / "keda-rbac.yaml").exists()


def test_an_empty_list_renders_no_keda_role(tmp_path: Path) -> None:
    overlay = team_overlay(tmp_path / "our-team", [])
    assert keda_rbac.main([str(overlay)]) == 0
    assert not keda_roles(render(overlay))


def test_the_template_is_not_part_of_any_kustomization() -> None:
    # Applied as it is, its placeholder namespace would be refused: it is only copied.
    for kustomization in DEPLOY.rglob("kustomization.yaml"):
        assert "templates" not in kustomization.read_text(), kustomization
