"""The real kubectl works against the simulator: discovery, short names, describe and writes.

kubectl runs as an asyncio subprocess, since the simulator serves from the test's own loop.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.sim import Simulator

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None, reason="kubectl is not on PATH: cannot check kubectl compat"
)
SJ = ("keda.sh/v1alpha1", "ScaledJob")


class Kubectl:
    """kubectl bound to one simulator's kubeconfig and a private discovery cache."""

    def __init__(self, kubeconfig: str, cache: Path) -> None:
        self.base = ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache)]

    async def run(self, *args: str, ok: bool = True) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            *self.base, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=20)
        code = process.returncode or 0
        if ok:
            assert code == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
        return code, out.decode(), err.decode()


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=["default"]) as simulator:
        yield simulator


@pytest.fixture
def kubectl(sim: Simulator, tmp_path: Path) -> Kubectl:
    return Kubectl(sim.write_kubeconfig(str(tmp_path / "kubeconfig")), tmp_path / "cache")


async def test_get_by_qualified_resource_name(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("get", "configs.kai.scheduler")
    assert out.split()[:3] == ["NAME", "AGE", "kai-config"]


async def test_get_by_short_name_as_json(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("get", "sj", "-n", "annia", "-o", "json")
    names = sorted(item["metadata"]["name"] for item in json.loads(out)["items"])
    assert names == ["annia-trainer", "annia-worker"]


async def test_missing_object_reports_the_server_message(kubectl: Kubectl) -> None:
    code, _, err = await kubectl.run("get", "config", "nope", ok=False)
    assert code == 1
    assert 'configs.kai.scheduler "nope" not found' in err


async def test_describe_shows_conditions(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("describe", "config", "kai-config")
    assert "DependenciesFulfilled" in out and "Events:" in out


async def test_annotate_reaches_the_store(kubectl: Kubectl, sim: Simulator) -> None:
    await kubectl.run("annotate", "scaledjob/annia-worker", "-n", "annia", "x=y")
    worker = sim.get(*SJ, "annia-worker", "annia")
    assert worker is not None and worker["metadata"]["annotations"] == {"x": "y"}


async def test_merge_and_json_patches_pause_and_resume(kubectl: Kubectl, sim: Simulator) -> None:
    pause = '{"metadata":{"annotations":{"autoscaling.keda.sh/paused":"true"}}}'
    await kubectl.run("patch", "sj", "annia-worker", "-n", "annia", "--type", "merge", "-p", pause)
    paused = sim.get(*SJ, "annia-worker", "annia")
    assert paused is not None and paused["metadata"]["annotations"]["autoscaling.keda.sh/paused"]
    resume = '[{"op":"remove","path":"/metadata/annotations/autoscaling.keda.sh~1paused"}]'
    await kubectl.run("patch", "sj", "annia-worker", "-n", "annia", "--type", "json", "-p", resume)
    resumed = sim.get(*SJ, "annia-worker", "annia")
    assert resumed is not None and resumed["metadata"]["annotations"] == {}


async def test_failing_json_patch_test_is_refused(kubectl: Kubectl) -> None:
    check = '[{"op":"test","path":"/spec/maxReplicaCount","value":99}]'
    args = ("patch", "sj", "annia-worker", "-n", "annia", "--type", "json", "-p", check)
    code, _, err = await kubectl.run(*args, ok=False)
    assert code == 1 and "test failed" in err


async def test_delete_removes_the_object(kubectl: Kubectl, sim: Simulator) -> None:
    await kubectl.run("delete", "scaledjob", "annia-trainer", "-n", "annia")
    assert sim.get(*SJ, "annia-trainer", "annia") is None
