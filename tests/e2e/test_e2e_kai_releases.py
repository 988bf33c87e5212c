"""Issue 23 item 4 end to end: KAI releases whose operator labels operands only `app=<name>`
(KAI v0.13), KAI's own availability rule for operands, and GPUs under a DRA DeviceClass.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testbed.stack import VIEWER, Stack, running_stack

KAI_NS = "kai-scheduler"
OPERANDS = ("admission", "binder", "pod-grouper", "podgroup-controller", "queue-controller")
MANAGED_BY = "app.kubernetes.io/managed-by"


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    """A cluster whose operands are as KAI v0.13's operator leaves them: `app=<name>` and no
    managed-by label."""
    async with running_stack(tmp_path) as running:
        for name in OPERANDS:
            patch = {"metadata": {"labels": {MANAGED_BY: None}}}
            running.sim.patch("apps/v1", "Deployment", name, KAI_NS, patch=patch)
        yield running


def break_binder(stack: Stack) -> None:
    where = ("apps/v1", "Deployment", "binder", KAI_NS)
    stack.sim.patch_status(*where, {"readyReplicas": 0, "availableReplicas": 0})
    message = "Deployment does not have minimum availability."
    stack.sim.set_condition(*where, "Available", "False", "MinimumReplicasUnavailable", message)


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
