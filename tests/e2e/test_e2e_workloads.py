"""`/kai queues`, `/kai pending` and `/kai why` end to end: signed slash commands in, Queues,
PodGroups, BindRequests, pods and events read from the simulator, the answer to the asker.
"""

from __future__ import annotations

import pytest

from testbed.sim import breakage
from testbed.stack import VIEWER, Stack

PENDING_POD = "annia/annia-worker-9k4mz-0"


async def test_queues_show_the_tree_with_gpu_quota_limit_allocated_and_requested(
    stack: Stack,
) -> None:
    reply = await stack.command("queues", user_id=VIEWER)

    lines = reply.text.splitlines()
    assert lines[0] == "KAI queues on sim"
    research = lines.index(
        "gpu-research (GPU research): GPU quota 8, limit 16, over-quota weight 1, allocated 6, "
        "requested 6 [parent: takes no jobs itself]"
    )
    assert lines[research + 1] == (
        "    ↳ annia (Annia workers): GPU quota 4, limit 8, over-quota weight 1, allocated 4, "
        "requested 4"
    )
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"


async def test_pending_lists_what_waits_with_its_reasons_and_not_the_stale_running_group(
    stack: Stack,
) -> None:
    quiet = await stack.command("pending")
    missing = await stack.command("pending nope")
    empty = await stack.command("pending keda")
    breakage.gpu_quota_exhausted(stack.sim)

    reply = await stack.command("pending annia")

    assert "Nothing waits for the KAI scheduler in all namespaces." in quiet.text
    assert "1 left out: their pods all run" in quiet.text
    assert missing.text.startswith("Namespace nope does not exist on sim")
    assert "Nothing waits for the KAI scheduler in namespace keda." in empty.text
    text = reply.text
    assert "annia/pg-annia-worker-9k4mz-" in text and "annia/pg-llm-finetune-q2w8e-" in text
    assert "vision-eval" not in text
    assert "OverLimit: annia quota has reached the allowable limit of GPUs" in text
    assert "→ queue annia is at its GPU limit (8 of 8 GPUs allocated; this job asks 8 more)" in text
    assert "NonPreemptibleOverQuota: Non-preemptible workload is over quota" in text
    assert "waiting 12m" in text


async def test_pending_reads_podgroups_only(stack: Stack) -> None:
    breakage.gpu_quota_exhausted(stack.sim)
    stack.sim.clear_requests()

    await stack.command("pending --all-namespaces")

    assert [(r.resource, r.verb, r.namespace) for r in stack.sim.requests] == [
        ("podgroups", "list", None)
    ]


async def test_why_follows_the_pod_to_its_group_queue_reasons_and_says_what_to_do(
    stack: Stack,
) -> None:
    breakage.gpu_quota_exhausted(stack.sim)

    reply = await stack.command(f"why {PENDING_POD}", user_id=VIEWER)

    text = reply.text
    assert text.startswith(f"Why {PENDING_POD} is Pending (on sim)")
    assert "Condition PodScheduled False (Unschedulable): OverLimit" in text
    assert "PodGroup: pg-annia-worker-9k4mz-" in text
    assert (
        "Queue: annia (Annia workers): GPU quota 4, limit 8, over-quota weight 1, allocated 8"
        in text
    )
    assert "Event: Unschedulable ×3: OverLimit" in text
    assert text.endswith(
        "What to do: queue annia is at its GPU limit (8 of 8 GPUs allocated; this job asks 8 "
        "more): wait for its jobs to finish, or raise spec.resources.gpu.limit of Queue annia"
    )


async def test_why_names_a_failed_bindrequest(stack: Stack) -> None:
    breakage.gpu_quota_exhausted(stack.sim)
    group = next(
        g["metadata"]["name"]
        for g in stack.sim.store.list_objects(
            stack.sim.store.resolve("scheduling.run.ai/v2alpha2", "podgroups"), "annia"
        )["items"]
        if g["metadata"]["name"].startswith("pg-annia-worker-9k4mz")
    )
    stack.sim.patch_status(
        "scheduling.run.ai/v2alpha2", "PodGroup", group, "annia", {"schedulingConditions": None}
    )
    stack.sim.apply(
        {
            "apiVersion": "scheduling.run.ai/v1alpha2",
            "kind": "BindRequest",
            "metadata": {"name": "annia-worker-9k4mz-0", "namespace": "annia"},
            "spec": {"podName": "annia-worker-9k4mz-0", "selectedNode": "gpu-node-7"},
            "status": {"phase": "Failed", "reason": 'nodes "gpu-node-7" not found'},
        }
    )

    reply = await stack.command(f"why {PENDING_POD}")

    assert 'BindRequest Failed to node gpu-node-7: nodes "gpu-node-7" not found' in reply.text
    assert (
        'What to do: binding failed (to node gpu-node-7: nodes "gpu-node-7" not found)'
        in reply.text
    )


async def test_why_of_a_pod_kai_does_not_schedule_says_so(stack: Stack) -> None:
    reply = await stack.command("why keda/keda-operator-metrics-apiserver-7b9f6c5d48-p4x9z")

    assert "Not scheduled by KAI: its schedulerName is default-scheduler" in reply.text
    assert "PodGroup" not in reply.text


async def test_why_of_a_missing_pod_says_so_and_reads_nothing_more(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("why annia/nope")

    assert reply.text == "Pod annia/nope was not found on sim."
    assert {r.resource for r in stack.sim.requests} == {"pods", "configs"}


async def test_a_forbidden_podgroup_list_names_the_missing_grant(stack: Stack) -> None:
    stack.sim.faults.add(403, resource="podgroups", times=None)

    reply = await stack.command("pending")

    assert "not allowed to list podgroups.scheduling.run.ai" in reply.text
    assert "grant verb 'list' on resource 'podgroups'" in reply.text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("why annia", "'annia' is not NAMESPACE/NAME", id="why-no-slash"),
        pytest.param("pending annia --all-namespaces", "not both", id="pending-both"),
        pytest.param("queues extra", "unexpected 'extra'", id="queues-extra"),
    ],
)
async def test_malformed_workload_commands_get_their_usage_and_read_nothing(
    stack: Stack, text: str, problem: str
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command(text)

    assert problem in reply.text and stack.sim.requests == []
