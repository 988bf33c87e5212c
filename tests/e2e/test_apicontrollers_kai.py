"""The controllers process plays a KAI release's operator (`--kai-release`): against the simulator
over HTTP (its own controllers off), it writes kai-config's conditions from the operand
workloads as that release writes them, so the cluster tier's stand-in can be held to a real
operator release by release (testbed/sim/kai_operator.py, kai_status.py)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_until

from testbed.sim import Simulator

CONFIG = ("kai.scheduler/v1", "Config", "kai-config")
UNAVAILABLE = "Binder: Deployment [binder] is not available\nBinder: not available"


RELEASES = [
    pytest.param(release, marks=pytest.mark.sim(scenarios=["kai-healthy"], kai_release=release))
    for release in ("v0.12", "v0.17")
]


@pytest.fixture
async def operator(sim: Simulator, tmp_path: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """The process playing the simulated cluster's KAI release's operator, `ready`; stopped
    while the simulator still serves (it may be in the middle of a request)."""
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "testbed.apicontrollers", "--kubeconfig", kubeconfig),
        *("--kai-release", sim.kai.name),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=30)
    assert line.strip() == b"ready"
    yield process
    process.terminate()
    await asyncio.wait_for(process.wait(), timeout=10)


def conditions(sim: Simulator) -> dict[str, dict[str, Any]]:
    config = sim.get(*CONFIG) or {}
    return {c["type"]: c for c in config["status"]["conditions"]}


@pytest.mark.parametrize("release", RELEASES)
async def test_an_operand_that_goes_down_is_reported_as_the_release_reports_it(
    release: str, sim: Simulator, operator: asyncio.subprocess.Process
) -> None:
    binder = ("apps/v1", "Deployment", "binder", "kai-scheduler")
    sim.set_condition(*binder, "Available", "False", "MinimumReplicasUnavailable", "down")

    def reported() -> bool:
        return conditions(sim)["Available"].get("message") == UNAVAILABLE

    await wait_until(reported, 20, "the operator's Available condition", every=0.05)
    found = conditions(sim)
    assert (found["Available"]["status"], found["Available"]["reason"]) == ("False", "available")
    if release == "v0.12":  # no Ready, Reconciling True for good
        assert "Ready" not in found and found["Reconciling"]["status"] == "True"
    else:  # Ready a copy of Available, Reconciling False once the pass ended
        assert (found["Ready"]["status"], found["Ready"]["message"]) == (
            "False",
            "System not ready",
        )
        assert found["Reconciling"]["status"] == "False"


@pytest.mark.parametrize("release", RELEASES)
async def test_enabling_prometheus_without_its_operator_is_a_missing_dependency(
    release: str, sim: Simulator, operator: asyncio.subprocess.Process
) -> None:
    sim.patch(*CONFIG, patch={"spec": {"prometheus": {"enabled": True}}})

    def reported() -> bool:
        return conditions(sim)["DependenciesFulfilled"].get("status") == "False"

    await wait_until(reported, 20, "the operator's DependenciesFulfilled", every=0.05)
    deps = conditions(sim)["DependenciesFulfilled"]
    assert deps["message"] == "\nKAI-prometheus is missing prometheus operator"
    assert deps["observedGeneration"] == (sim.get(*CONFIG) or {})["metadata"]["generation"]
