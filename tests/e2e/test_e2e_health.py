"""`/kai health` end to end: signed Slack requests in, the simulator read over HTTP, reply out.

The emulator plays Slack (signed HTTP to POST /slack/events, or Socket Mode envelopes over a
websocket) and records what the service sends to the response_url; the service reads the
simulated cluster through the official Kubernetes client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testbed.sim import breakage
from testbed.stack import Stack, running_stack


@pytest.fixture
async def socket_stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, socket_mode=True) as running:
        yield running


async def test_health_of_a_healthy_install_is_posted_for_the_channel(stack: Stack) -> None:
    reply = await stack.command("health")
    assert reply.delivery.status == 200
    assert reply.message is not None
    assert reply.message["response_type"] == "in_channel"
    assert reply.text.startswith("KAI health on sim: Healthy")
    assert "Config kai-config: Healthy" in reply.text
    assert "APIService v1beta1.external.metrics.k8s.io: Healthy" in reply.text
    assert stack.slack.violations == []


async def test_missing_dependencies_are_reported_degraded_with_the_operators_words(
    stack: Stack,
) -> None:
    breakage.dependencies_missing(stack.sim)
    reply = await stack.command("health")
    assert reply.text.startswith("KAI health on sim: Degraded")
    assert "KAI-prometheus is missing prometheus operator" in reply.text
    blocks_text = " ".join(b.get("text", {}).get("text", "") for b in reply.message["blocks"])  # type: ignore[index]
    assert "KAI-prometheus is missing prometheus operator" in blocks_text


async def test_a_deleted_kai_config_is_reported_missing(stack: Stack) -> None:
    breakage.delete_kai_config(stack.sim)
    reply = await stack.command("health")
    assert reply.text.startswith("KAI health on sim: Missing")


async def test_an_unavailable_apiservice_names_its_backing_service(stack: Stack) -> None:
    breakage.apiservice_down(stack.sim)
    reply = await stack.command("health --cluster sim")
    assert "APIService v1beta1.external.metrics.k8s.io: Degraded" in reply.text
    assert "keda/keda-operator-metrics-apiserver" in reply.text


async def test_an_unknown_cluster_gets_a_short_private_message(stack: Stack) -> None:
    reply = await stack.command("health --cluster nowhere")
    assert reply.message is not None
    assert reply.message["response_type"] == "ephemeral"
    assert "unknown cluster 'nowhere'" in reply.text


async def test_a_malformed_command_gets_its_usage_in_the_ack_and_reads_nothing(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()
    reply = await stack.command("health extra words")
    assert reply.delivery.status == 200
    assert "/kai health" in reply.text
    assert stack.sim.requests == []


async def test_e2e_typo_suggests_health_and_shows_only_its_usage(stack: Stack) -> None:
    stack.sim.clear_requests()
    reply = await stack.command("helth")
    assert "did you mean health?" in reply.text
    assert "/kai health [--cluster NAME]" in reply.text
    assert "/kai pause" not in reply.text and "/kai unsilence" not in reply.text
    assert stack.sim.requests == []


async def test_help_lists_every_command(stack: Stack) -> None:
    reply = await stack.command("help")
    for sub in ("health", "scaledjobs", "pause", "resume", "reconcile", "sync", "alerts", "ack"):
        assert f"/kai {sub}" in reply.text


@pytest.mark.parametrize(
    ("signature", "offset"), [("v0=forged", 0), (None, -400)], ids=["forged", "stale"]
)
async def test_a_forged_or_stale_signature_gets_401_and_no_reply(
    stack: Stack, signature: str | None, offset: int
) -> None:
    rejected = await stack.driver.send_command(
        "health", user_id="U0OPERATOR", signature=signature, timestamp_offset=offset
    )
    assert rejected.status == 401
    accepted = await stack.command("health")  # the service is idle once this has been answered
    assert accepted.message is not None
    assert stack.slack.responses(rejected.hook_id) == []


async def test_health_over_socket_mode(socket_stack: Stack) -> None:
    reply = await socket_stack.command("health")
    assert reply.delivery.mode == "socket"
    assert reply.delivery.acked
    assert reply.text.startswith("KAI health on sim: Healthy")


async def test_a_health_check_makes_a_constant_number_of_api_requests(stack: Stack) -> None:
    stack.sim.clear_requests()
    await stack.command("health")
    first = len(stack.sim.requests)
    for i in range(20):
        stack.sim.apply(extra_deployment(f"extra-{i}"))
    stack.sim.clear_requests()
    await stack.command("health")
    # kai-config, shards, Deployments and DaemonSets of the KAI namespace, CRDs, the APIService
    assert len(stack.sim.requests) == first == 6


def extra_deployment(name: str) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "kai-scheduler",
            "labels": {"app.kubernetes.io/managed-by": "kai-operator", "app": name},
        },
        "spec": {"replicas": 1},
        "status": {
            "replicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True"}],
        },
    }


async def test_concurrent_health_commands_share_one_check_of_the_cluster(stack: Stack) -> None:
    stack.sim.faults.add(None, resource="configs", delay=0.5)  # keeps the first check in flight
    stack.sim.clear_requests()
    replies = await asyncio.gather(*(stack.command("health") for _ in range(10)))
    assert [r.text.splitlines()[0] for r in replies] == ["KAI health on sim: Healthy"] * 10
    assert len(stack.sim.requests) == 6


async def test_health_still_answers_after_a_service_restart(stack: Stack) -> None:
    await stack.restart_service()
    reply = await stack.command("health")
    assert reply.text.startswith("KAI health on sim: Healthy")
