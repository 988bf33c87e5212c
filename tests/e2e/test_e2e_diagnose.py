"""`/kai diagnose` end to end: signed slash commands in, the simulator read over HTTP (pods,
events, `pods/log`, EndpointSlices), the diagnosis posted in the channel.
"""

from __future__ import annotations

from typing import Any

import pytest

from testbed.sim import breakage, workload_breakage
from testbed.stack import VIEWER, Stack

KEDA_POD = "keda-operator-metrics-apiserver-7b9f6c5d48-p4x9z"


def all_text(message: Any) -> str:
    """Every mrkdwn and plain text of a message's blocks, joined."""
    parts = []
    for block in message.get("blocks") or []:
        if "text" in block:
            parts.append(block["text"]["text"])
        parts += [e.get("text", "") for e in block.get("elements") or []]
    return "\n".join(parts)


async def test_diagnose_keda_shows_the_oomkilled_crashloop_its_log_and_no_ready_endpoint(
    stack: Stack,
) -> None:
    breakage.metrics_apiserver_crashloop(stack.sim)

    reply = await stack.command("diagnose keda", user_id=VIEWER)

    assert reply.message is not None and reply.message["response_type"] == "in_channel"
    blocks = all_text(reply.message)
    assert reply.text.startswith("Diagnosis of keda on sim: Degraded")
    assert "CrashLoopBackOff, restarted 7 times" in blocks
    assert "OOMKilled (exit code 137): it ran out of memory" in blocks
    assert "previous instance, before its last restart" in blocks
    assert "```" in blocks and "fatal error: runtime: out of memory" in blocks
    assert "Bearer [redacted]" in blocks and "eyJhbGciOiJSUzI1NiJ9" not in str(reply.message)
    assert "BackOff ×12" in blocks
    assert "0 ready endpoint(s)" in blocks and "1 not ready" in blocks


async def test_diagnose_keda_reads_previous_logs_and_lists_by_selector(stack: Stack) -> None:
    breakage.metrics_apiserver_crashloop(stack.sim)
    stack.sim.clear_requests()

    await stack.command("diagnose keda")

    logs = [r for r in stack.sim.requests if r.subresource == "log"]
    assert [(r.query.get("previous"), r.query.get("tailLines")) for r in logs] == [("true", "20")]
    pods = [r for r in stack.sim.requests if r.resource == "pods" and r.verb == "list"]
    assert [r.query.get("labelSelector") for r in pods] == ["app=keda-operator-metrics-apiserver"]
    events = [r for r in stack.sim.requests if r.resource == "events"]
    assert [r.query.get("fieldSelector") for r in events] == ["type=Warning"]


async def test_diagnose_kai_shows_the_operator_and_only_what_is_not_available(
    stack: Stack,
) -> None:
    healthy = await stack.command("diagnose kai")
    breakage.scheduler_down(stack.sim)

    broken = await stack.command("diagnose kai")

    assert healthy.text.splitlines()[:2] == [
        "Diagnosis of kai on sim: Healthy",
        "Every KAI operand and shard scheduler is available.",
    ]
    assert "Deployment kai-scheduler/kai-operator: Healthy" in healthy.text
    assert "binder" not in healthy.text
    assert "Deployment kai-scheduler/kai-scheduler-default: Degraded" in broken.text
    assert "binder" not in broken.text


async def test_diagnose_one_deployment_counts_the_same_requests_for_5_or_50_pods(
    stack: Stack,
) -> None:
    counts = []
    for replicas in (5, 50):
        workload_breakage.crashing_deployment(stack.sim, "annia", "trainer", replicas)
        stack.sim.clear_requests()
        reply = await stack.command("diagnose annia/trainer")
        assert "Deployment annia/trainer: Degraded" in reply.text
        assert "… 0 more" not in all_text(reply.message)
        counts.append(len(stack.sim.requests))

    assert counts[0] == counts[1] == 5  # deployment, replicasets, pods, events, one log


async def test_a_deployment_that_does_not_exist_is_missing(stack: Stack) -> None:
    reply = await stack.command("diagnose annia/nope")

    assert reply.text.splitlines()[0] == "Diagnosis of annia/nope on sim: Missing"
    assert "Deployment annia/nope was not found" in reply.text


async def test_a_log_the_bot_may_not_read_is_said_and_the_rest_still_shown(stack: Stack) -> None:
    breakage.metrics_apiserver_crashloop(stack.sim)
    stack.sim.faults.add(403, path_contains="/log", times=None)

    reply = await stack.command("diagnose keda")

    blocks = all_text(reply.message)
    assert "not allowed to read its log" in blocks and "pods/log" in blocks
    assert "CrashLoopBackOff" in blocks


async def test_text_from_the_cluster_is_escaped_in_blocks_and_fallback(stack: Stack) -> None:
    breakage.metrics_apiserver_crashloop(stack.sim)
    event = stack.sim.get("v1", "Event", f"sim-{KEDA_POD}.backoff", "keda")
    assert event is not None
    event["message"] = "<!channel> restarting `x` <https://evil|click>"
    stack.sim.apply(event)
    stack.sim.write_log(
        "keda", KEDA_POD, "keda-operator-metrics-apiserver", ["<!here> ```"], previous=True
    )

    reply = await stack.command("diagnose keda")

    assert reply.message is not None
    for text in (reply.text, all_text(reply.message)):
        assert "<!channel>" not in text and "<!here>" not in text and "<https://" not in text
        assert "&lt;!channel&gt;" in text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("diagnose", "diagnose needs kai, keda or NAMESPACE/DEPLOYMENT", id="nothing"),
        pytest.param("diagnose annia", "'annia' is not NAMESPACE/NAME", id="no-slash"),
        pytest.param("diagnose kai extra", "unexpected 'extra'", id="extra-word"),
    ],
)
async def test_a_malformed_diagnose_gets_its_usage_and_reads_nothing(
    stack: Stack, text: str, problem: str
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command(text)

    assert problem in reply.text and "diagnose kai|keda|NAMESPACE/DEPLOYMENT" in reply.text
    assert stack.sim.requests == []
