"""KAI releases end to end, release by release (`running_stack(kai_release=...)`, the imitation's
`testbed/sim/kai_releases.py`): `/kai health` on what each release's operator writes (#1060's
`Ready` and `Reconciling`, an operator that dies mid-pass, v0.16's NUMA placement exporter
DaemonSet), operands labelled only `app=<name>` (KAI v0.12-v0.16.0), KAI's own availability
rule for operands, and GPUs under a DRA DeviceClass (issue 23 item 4, issue 35 item 3).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from clocks import Clock

from testbed.sim import kai_breakage
from testbed.stack import VIEWER, Stack, running_stack

KAI_NS = "kai-scheduler"
RELEASES = ("v0.12", "v0.13", "v0.16", "v0.17")
PAST_THRESHOLD = timedelta(minutes=11, seconds=30)  # kai.progressing_timeout: 10m by default
CONFIG = ("kai.scheduler/v1", "Config", "kai-config")


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    """A cluster running KAI v0.13, whose operator labels operands only `app=<name>`."""
    async with running_stack(tmp_path, kai_release="v0.13") as running:
        yield running


def break_binder(stack: Stack) -> None:
    where = ("apps/v1", "Deployment", "binder", KAI_NS)
    stack.sim.patch_status(*where, {"readyReplicas": 0, "availableReplicas": 0})
    message = "Deployment does not have minimum availability."
    stack.sim.set_condition(*where, "Available", "False", "MinimumReplicasUnavailable", message)


def condition_types(stack: Stack) -> dict[str, str]:
    config = stack.sim.get(*CONFIG) or {}
    return {c["type"]: c["status"] for c in config["status"]["conditions"]}


@pytest.mark.parametrize("release", RELEASES)
async def test_a_healthy_install_of_each_release_is_healthy(tmp_path: Path, release: str) -> None:
    async with running_stack(tmp_path, kai_release=release) as stack:
        reply = await stack.command("health")

        assert reply.text.startswith("KAI health on sim: Healthy"), reply.text
        assert "Config kai-config: Healthy" in reply.text
        # v0.12.0 writes no Ready and leaves Reconciling True: still Healthy.
        expected = {"Reconciling": "True"} if release == "v0.12" else {"Reconciling": "False"}
        assert condition_types(stack).items() >= expected.items()
        assert ("Ready" in condition_types(stack)) is (release != "v0.12")


@pytest.mark.parametrize("release", RELEASES)
async def test_an_operator_that_dies_mid_pass_is_not_reconciling_on_every_release(
    tmp_path: Path, release: str
) -> None:
    """A spec edit the operator began and never ended: within the threshold nothing is said,
    past it `/kai health` says the operator is not reconciling, whatever the release."""
    clock = Clock()
    async with running_stack(tmp_path, kai_release=release, clock=clock) as stack:
        kai_breakage.operator_dies_mid_pass(stack.sim)
        within = await stack.command("health")
        clock.advance(PAST_THRESHOLD)
        past = await stack.command("health")

        assert "operator not reconciling" not in within.text
        assert "Config kai-config: Degraded" in past.text
        assert "operator not reconciling: Progressing for 11m" in past.text


async def test_a_v0_13_pass_that_never_ends_shows_in_reconciling_alone(tmp_path: Path) -> None:
    """v0.13 sets Reconciling True at every pass's start (#1060, before #1229): an operator that
    dies then leaves every other condition current and True."""
    clock = Clock()
    async with running_stack(tmp_path, kai_release="v0.13", clock=clock) as stack:
        kai_breakage.operator_dies_mid_pass(stack.sim, spec_edit=False)
        within = await stack.command("health")
        clock.advance(PAST_THRESHOLD)
        past = await stack.command("health")

        assert within.text.startswith("KAI health on sim: Healthy")
        assert "Config kai-config: Degraded" in past.text
        assert (
            "operator not reconciling: a pass it began never ended, Reconciling True for 11m"
        ) in past.text


@pytest.mark.parametrize("release", ("v0.16", "v0.17"))
async def test_the_numa_placement_exporter_daemonset_is_checked_as_an_operand(
    tmp_path: Path, release: str
) -> None:
    async with running_stack(tmp_path, kai_release=release) as stack:
        kai_breakage.numa_exporter_on(stack.sim, nodes=3)
        healthy = await stack.command("health")
        kai_breakage.numa_exporter_down(stack.sim, available=2)
        down = await stack.command("health")

        assert healthy.text.startswith("KAI health on sim: Healthy")
        assert "numa-placement-exporter (DaemonSet)" in healthy.text
        assert (
            f"DaemonSet {KAI_NS}/numa-placement-exporter: Degraded: not available (2 of 3 "
            "nodes' pods available)"
        ) in down.text
        assert "NumaPlacementExporter: DaemonSet [numa-placement-exporter] is not available" in (
            down.text
        )
        assert ("Ready" in condition_types(stack)) and condition_types(stack)["Ready"] == "False"


async def test_a_release_before_the_exporter_cannot_enable_it(tmp_path: Path) -> None:
    async with running_stack(tmp_path, kai_release="v0.13") as stack:
        with pytest.raises(ValueError, match=r"KAI v0\.13\.0 has no NUMA placement exporter"):
            kai_breakage.numa_exporter_on(stack.sim)
        reply = await stack.command("health")

        assert "DaemonSet" not in reply.text


async def test_diagnose_kai_finds_an_unavailable_operand_labelled_only_app_name(
    stack: Stack,
) -> None:
    break_binder(stack)

    reply = await stack.command("diagnose kai")

    assert "Deployment kai-scheduler/binder: Degraded" in reply.text
    assert "Every KAI operand and shard scheduler is available." not in reply.text


async def test_health_counts_the_operands_of_a_kai_release_labelling_only_app_name(
    stack: Stack,
) -> None:

    healthy = await stack.command("health")
    break_binder(stack)
    broken = await stack.command("health")

    assert "none found" not in healthy.text
    assert "5 Deployments available: admission, binder" in healthy.text
    assert "binder" in broken.text and "Degraded" in broken.text


async def test_an_operand_not_every_replica_updated_is_diagnosed_not_available(
    stack: Stack,
) -> None:
    """KAI's isControllerAvailable: updatedReplicas != replicas is not available."""
    stack.sim.patch("apps/v1", "Deployment", "binder", KAI_NS, patch={"spec": {"replicas": 2}})
    stack.sim.patch_status(
        "apps/v1", "Deployment", "binder", KAI_NS, {"updatedReplicas": 1, "availableReplicas": 1}
    )

    reply = await stack.command("diagnose kai")

    assert "Deployment kai-scheduler/binder: Degraded" in reply.text


async def test_queues_count_gpus_under_a_dra_device_class(stack: Stack) -> None:
    dra = {  # the device-plugin entries gone: a cluster whose GPUs are all DRA devices
        "allocated": {"nvidia.com/gpu": None, "gpu.nvidia.com": "3", "cpu": "24"},
        "requested": {"nvidia.com/gpu": None, "gpu.nvidia.com": "5"},
    }
    stack.sim.patch_status("scheduling.run.ai/v2", "Queue", "annia", None, dra)

    reply = await stack.command("queues", user_id=VIEWER)

    assert (
        "    ↳ annia (Annia workers): GPU quota 4, limit 8, over-quota weight 1, allocated 3 "
        "(3 DRA), requested 5 (5 DRA)"
    ) in reply.text.splitlines()
    legend = json.dumps(reply.message)  # the reply explains its own numbers
    assert "GPUs are whole devices: nvidia.com/gpu plus GPUs claimed through a DRA" in legend
    assert '\\"not set\\": the Queue has no such value' in legend
    assert "GPUs in devices" not in legend
