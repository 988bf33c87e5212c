"""Helpers for the deploy tests: render a kustomization with the real `kubectl kustomize`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
KUSTOMIZATIONS = sorted(p.parent for p in DEPLOY.rglob("kustomization.yaml"))
# What a team applies (components are parts of these, never applied alone).
OVERLAYS = sorted(p.parent for p in (DEPLOY / "overlays").glob("*/kustomization.yaml"))
COMPONENTS = sorted(p.parent for p in (DEPLOY / "components").glob("*/kustomization.yaml"))
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))

import chart_sync as chart_sync  # noqa: E402  (re-exported: `make chart`)
import keda_rbac as keda_rbac  # noqa: E402  (re-exported: `make keda-rbac`)

# The registry a team publishes its image to (`make push IMAGE=...`), as the README says.
TEAM_IMAGE = ("registry.example.com/kai-chatops", "0.2.0")


def render(directory: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize DIRECTORY` prints."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the deploy manifests cannot be rendered here")
    done = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def team_overlay(directory: Path, keda_namespaces: list[str]) -> Path:
    """A team's overlay made as the README tells a newcomer: flux-only's, copied outside the
    repository, with its own KEDA namespaces in config.yaml and its own image under `images:`.
    `keda_rbac.main([str(directory)])` then writes its KEDA Roles."""
    directory.mkdir()
    source = DEPLOY / "overlays" / "flux-only"
    text = (source / "kustomization.yaml").read_text()
    text = text.replace("../../", f"{os.path.relpath(DEPLOY, directory)}/")
    name, tag = TEAM_IMAGE
    text += (
        f"images:\n  - name: ghcr.io/your-org/kai-chatops\n    newName: {name}\n    newTag: {tag}\n"
    )
    (directory / "kustomization.yaml").write_text(text)
    settings = yaml.safe_load((source / "config.yaml").read_text())
    settings["keda"]["namespaces"] = keda_namespaces
    (directory / "config.yaml").write_text(yaml.safe_dump(settings))
    return directory
