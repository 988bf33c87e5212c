"""The controllers process of the cluster tier answers as the simulator's own controllers do.

`python -m testbed.apicontrollers` reaches the API server only over HTTP through the official
client; here it runs against the simulator (its in-process controllers off), so the cluster
tier's stand-ins for Flux, Argo CD and KEDA are shown to answer before a real server is involved.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_until

from testbed.sim import Simulator

HELMRELEASE = ("helm.toolkit.fluxcd.io", "v2", "helmreleases")
APPLICATION = ("argoproj.io", "v1alpha1", "applications")
SCALEDJOB = ("keda.sh", "v1alpha1", "scaledjobs")


pytestmark = pytest.mark.sim(scenarios=["default"], controllers=False)


@pytest.fixture
def controllers(sim: Simulator, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    process = subprocess.Popen(
        [sys.executable, "-m", "testbed.apicontrollers", "--kubeconfig", kubeconfig, "--keda"],
        stdout=subprocess.PIPE,
        text=True,
    )
    yield process
    process.terminate()
    process.wait(timeout=10)


async def ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), timeout=30)
    assert line.strip() == "ready"


def read(sim: Simulator, kind: tuple[str, str, str], namespace: str, name: str) -> dict[str, Any]:
    rtype = sim.store.find_type(*kind)
    assert rtype is not None
    return sim.store.get(rtype, namespace, name)


def patch(sim: Simulator, kind: tuple[str, str, str], namespace: str, name: str, body: Any) -> None:
    rtype = sim.store.find_type(*kind)
    assert rtype is not None
    sim.store.patch(rtype, namespace, name, "merge", body)


async def test_a_reconcile_request_is_handled_with_ready_set(
    sim: Simulator, controllers: subprocess.Popen[str]
) -> None:
    await ready(controllers)
    token = "2026-12-01T00:00:00.000000001Z"
    annotations = {"reconcile.fluxcd.io/requestedAt": token}
    patch(sim, HELMRELEASE, "flux-system", "keda", {"metadata": {"annotations": annotations}})

    def handled() -> bool:
        status = read(sim, HELMRELEASE, "flux-system", "keda").get("status") or {}
        return bool(status.get("lastHandledReconcileAt") == token)

    await wait_until(handled, 20, "the reconcile request handled", every=0.05)
    conditions = read(sim, HELMRELEASE, "flux-system", "keda")["status"]["conditions"]
    assert {c["type"]: c["status"] for c in conditions}["Ready"] == "True"


async def test_a_refresh_request_is_removed_and_a_pause_gets_its_condition(
    sim: Simulator, controllers: subprocess.Popen[str]
) -> None:
    await ready(controllers)
    refresh = {"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}
    patch(sim, APPLICATION, "argocd", "kai-scheduler", refresh)
    pause = {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}}
    patch(sim, SCALEDJOB, "annia", "annia-worker", pause)

    def refreshed() -> bool:
        annotations = read(sim, APPLICATION, "argocd", "kai-scheduler")["metadata"]
        return "argocd.argoproj.io/refresh" not in (annotations.get("annotations") or {})

    def paused() -> bool:
        status = read(sim, SCALEDJOB, "annia", "annia-worker").get("status") or {}
        found = {c["type"]: c["status"] for c in status.get("conditions") or []}
        return found.get("Paused") == "True"

    await wait_until(refreshed, 20, "the refresh annotation removed", every=0.05)
    await wait_until(paused, 20, "the Paused condition set", every=0.05)
