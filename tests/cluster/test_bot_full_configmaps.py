"""A ConfigMap holds at most 1 MiB on a real API server (the simulator did not enforce it until
the differential tests caught it): what the bot does when its request memory or its alert state
reaches the limit. It must keep working (docs/design.md §2 "Safety" and "Delivery").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BOT_CONTEXT
from controlplane import BOT_NAMESPACE, ControlPlane
from seeding import Seeder

from testbed.stack import ServiceStack, running_service

MEMORY = "kai-chatops-state-once"
STATE = "kai-chatops-state"
LIMIT = 1024 * 1024
FAR = "4102444800.0"  # 2100-01-01: entries that will not expire during the test


def nearly_full(name: str, key_prefix: str, value: str) -> dict[str, Any]:
    """A ConfigMap of the bot's, so full that no entry of the bot's size fits in the 1 MiB the
    server allows (it counts keys and values)."""
    data: dict[str, str] = {}
    size, index = 0, 0
    while size + len(key_prefix) + 6 + len(value) <= LIMIT:
        key = f"{key_prefix}{index:06d}"
        data[key] = value
        size += len(key) + len(value)
        index += 1
    filler = LIMIT - size - len(key_prefix) - 6
    if filler >= len(value):  # the last entry is padded: still a readable, live expiry
        data[f"{key_prefix}{index:06d}"] = value + "0" * (filler - len(value))
    metadata = {"name": name, "namespace": BOT_NAMESPACE}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


@pytest.fixture
async def in_cluster(
    control_plane: ControlPlane,
    controllers: object,
    scenario: list[dict[str, Any]],
    tmp_path: Path,
) -> AsyncIterator[ServiceStack]:
    admin = Seeder(control_plane.admin())
    for name in (MEMORY, STATE):
        admin.remove(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": BOT_NAMESPACE},
            }
        )
    overrides = {"state": {"path": str(tmp_path / "s.sqlite"), "backend": "configmap"}}
    async with running_service(
        tmp_path,
        str(control_plane.bot_kubeconfig),
        context=BOT_CONTEXT,
        config_overrides=overrides,
    ) as served:
        yield served


async def test_with_the_request_memory_full_a_read_still_answers(
    in_cluster: ServiceStack, control_plane: ControlPlane
) -> None:
    Seeder(control_plane.admin()).replace(nearly_full(MEMORY, "slack-", FAR))
    reply = await in_cluster.command("health")
    assert reply.text.startswith("KAI health on sim: Healthy")


async def test_with_the_request_memory_full_a_change_still_runs_to_its_end(
    in_cluster: ServiceStack, control_plane: ControlPlane
) -> None:
    """The memory cannot take another entry (the server would answer 422, too long): the bot
    does not stop; a reconcile still runs to its result. (Making room in the memory itself, so
    replays to other replicas stay caught, is issue 22's.)"""
    Seeder(control_plane.admin()).replace(nearly_full(MEMORY, "slack-", FAR))
    reply = await in_cluster.command("reconcile hr flux-system/keda")
    assert reply.text.endswith("reconciling…"), reply.text
    final = await in_cluster.slack.wait_for_response(reply.delivery.hook_id, count=2, timeout=30)
    assert final.body["text"].startswith(
        "Flux reconcile of HelmRelease flux-system/keda on sim: reconciled"
    )
