"""GPU nodes end to end (docs/design.md §2 "GPU nodes"): signed Slack requests in, the simulated
cluster's Nodes out. The GPU node alert (`sim gpu_lost`: allocatable 7 of 8, NVSentinel's
GpuMemWatch True) pages once with the node as its first reply and resolves when the GPU is back;
`/kai nodes` shows capacity / allocatable / allocated in two lists; `/kai cordon` and `uncordon`
write `spec.unschedulable` and our record only, after a Confirm, as the person with
impersonation; a timed cordon ends by itself after a restart.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, alert_stack, assert_one_clean_incident, check, roots, words
from approval_records import approval_config
from clocks import START, Clock
from stack_steps import audit_lines, channel_texts, patches

from bot.nodes import expiry
from testbed.sim import breakage
from testbed.sim.impersonation import Acting
from testbed.stack import ALERT_CHANNEL, OPERATOR, VIEWER, Reply, Stack, running_stack

GPU_NODES = {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h", "gpu_nodes": True}
RECORD = ("cordoned-by", "cordoned-at", "cordon-reason", "cordon-until")


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, clock=clock) as running:
        yield running


def node(stack: Stack, name: str) -> dict[str, Any]:
    obj = stack.sim.get("v1", "Node", name)
    assert obj is not None
    return obj


def ours(obj: Mapping[str, Any]) -> dict[str, str]:
    notes = obj["metadata"].get("annotations") or {}
    return {k.removeprefix("kai-chatops/"): v for k, v in notes.items() if k.startswith("kai-")}


def node_reads(stack: Stack) -> list[tuple[str, str]]:
    return [(r.resource, r.verb) for r in stack.sim.requests if r.resource in ("nodes", "pods")]


async def confirmed(stack: Stack, text: str) -> tuple[Reply, Mapping[str, Any]]:
    """Type the command, then click Confirm; the ask and the message that replaced it."""
    ask = await stack.command(text)
    assert ask.message is not None, ask.text
    done = await stack.click("Confirm", ask.message)
    assert done.message is not None
    return ask, done.message


async def test_a_lost_gpu_pages_once_with_the_node_as_evidence_and_resolves_when_it_is_back(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=GPU_NODES) as (stack, _):
        await check(stack.service)
        assert roots(stack) == []
        breakage.ACTIONS["gpu_lost"](stack.sim, "gpu-node-2")
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        [root] = roots(stack)
        assert root.text.startswith(
            "[WARNING] sim: Node gpu-node-2 GPUs: GPU node gpu-node-2: 1 of 8 GPUs lost; "
            "GpuMemWatch True"
        )
        shown = words(root)
        assert "1 GPU of its 8 not allocatable: the device plugin advertises 7" in shown
        assert "GpuMemWatch is True (GpuMemWatchIsNotHealthy): ErrorCode:DCGM_FR_XID_ERROR" in shown
        assert "Detected XID 94 for GPU 3" in shown
        assert "It is not cordoned" in shown
        [evidence, changes] = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert evidence.text.startswith("Node gpu-node-2 on sim now:")
        assert changes.text.startswith("What changed on sim in the hour before")
        assert "gpu-node-2: Ready · GPUs 8 / 7 / 2 (1 lost: not allocatable)" in words(evidence)

        breakage.ACTIONS["heal"](stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)
        replies = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert [r.text[:30] for r in replies] == [
            "Node gpu-node-2 on sim now:\ngp",
            "What changed on sim in the hou",
            ":white_check_mark: Resolved at",
        ]
        assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED (warning)]")
        assert_one_clean_incident(stack)


async def test_a_gpu_node_that_goes_not_ready_pages_with_readys_message(tmp_path: Path) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=GPU_NODES) as (stack, _):
        said = "Kubelet stopped posting node status."
        stack.sim.set_condition(
            "v1", "Node", "gpu-node-1", None, "Ready", "Unknown", "NodeStatusUnknown", said
        )
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        [root] = roots(stack)
        assert "GPU node gpu-node-1: Ready Unknown" in root.text
        assert f"Ready is Unknown (NodeStatusUnknown): {said}" in words(root)


async def test_with_gpu_nodes_off_no_node_is_read_and_nothing_is_posted(tmp_path: Path) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        breakage.ACTIONS["gpu_lost"](stack.sim)
        stack.sim.clear_requests()
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        assert roots(stack) == [] and node_reads(stack) == []


async def test_nodes_shows_each_gpu_nodes_gpus_cordon_and_conditions_in_two_lists(
    stack: Stack,
) -> None:
    breakage.ACTIONS["gpu_lost"](stack.sim, "gpu-node-2")
    stack.sim.clear_requests()

    reply = await stack.command("nodes", user_id=VIEWER)

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    lines = reply.text.splitlines()
    assert lines[0] == (
        "GPU nodes on sim: 2 of 3 nodes have GPUs · 15 of 16 GPUs allocatable · 6 allocated · "
        "1 need attention"
    )
    assert "gpu-node-2: Ready · GPUs 8 / 7 / 2 (1 lost: not allocatable)" in lines
    assert "gpu-node-1: Ready · GPUs 8 / 8 / 4" in lines
    assert lines.index("gpu-node-1: Ready · GPUs 8 / 8 / 4") > 1  # the sick node first
    assert any(
        x.startswith("    GpuMemWatch True (GpuMemWatchIsNotHealthy) [failing]: ") for x in lines
    )
    assert "    GpuMemWatch False (GpuMemWatchIsHealthy): No Health Failures" in lines
    assert "cpu-node-1" not in reply.text
    assert sorted(node_reads(stack)) == [("nodes", "list"), ("pods", "list")]
    (pods,) = [r for r in stack.sim.requests if r.resource == "pods"]
    assert pods.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"


async def test_cordon_then_uncordon_write_only_unschedulable_and_our_record(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    stack.sim.clear_requests()

    ask, done = await confirmed(stack, "cordon gpu-node-1 for 2h XID 94 on GPU 3")

    assert "Cordon Node gpu-node-1 on sim?" in ask.text
    assert "what runs there keeps running: kai-chatops never drains" in str(ask.message)
    assert "Writes: spec.unschedulable: true, kai-chatops/cordoned-by" in str(ask.message)
    cordoned = node(stack, "gpu-node-1")
    assert cordoned["spec"] == {"unschedulable": True}
    assert ours(cordoned) == {
        "cordoned-by": OPERATOR,
        "cordoned-at": "2026-08-24T08:00:00Z",
        "cordon-reason": "XID 94 on GPU 3",
        "cordon-until": "2026-08-24T10:00:00Z",
    }
    assert cordoned["status"]["allocatable"]["nvidia.com/gpu"] == "8"  # nothing else touched
    (patch,) = patches(stack)
    assert set(patch.body) == {"spec", "metadata"} and patch.body["metadata"]["resourceVersion"]
    assert "Cordoned Node gpu-node-1 on sim until 2026-08-24 10:00 UTC" in done["text"]
    assert "nothing was drained" in done["text"]
    (announced,) = channel_texts(stack)
    assert f"<@{OPERATOR}> cordoned Node gpu-node-1 on sim until 2026-08-24 10:00 UTC" in announced
    assert "Reason: XID 94 on GPU 3" in announced
    listed = await stack.command("nodes", user_id=VIEWER)
    assert "cordoned by " in listed.text and "until 2026-08-24 10:00 UTC: XID 94" in listed.text

    again = await stack.command("cordon gpu-node-1 second try")
    assert "is already cordoned by" in again.text and "nothing was changed" in again.text

    _, undone = await confirmed(stack, "uncordon gpu-node-1")
    after = node(stack, "gpu-node-1")
    assert after["spec"] == {"unschedulable": False} and ours(after) == {}
    assert "Uncordoned Node gpu-node-1 on sim" in undone["text"]
    assert (
        f"<@{OPERATOR}> uncordoned Node gpu-node-1 on sim (it was cordoned by"
        in (channel_texts(stack)[-1])
    )
    assert [(r["action"], r["target"], r["outcome"]) for r in audit_lines(caplog)] == [
        ("cordon", "Node gpu-node-1 on sim", "ok"),
        ("uncordon", "Node gpu-node-1 on sim", "ok"),
    ]
    assert stack.slack.violations == []


async def test_an_unknown_node_is_answered_with_the_gpu_nodes_and_nothing_changes(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("cordon gpu-node-9 maintenance")

    assert "No node gpu-node-9 on sim; GPU nodes are gpu-node-1, gpu-node-2." in reply.text
    assert patches(stack) == []


async def test_a_node_without_gpus_may_be_cordoned_and_the_confirm_says_so(stack: Stack) -> None:
    ask, done = await confirmed(stack, "cordon cpu-node-1 kernel upgrade")

    assert "Node cpu-node-1 has no GPUs (no nvidia.com/gpu)." in str(ask.message)
    assert "Cordoned Node cpu-node-1 on sim (it has no GPUs)" in done["text"]
    assert node(stack, "cpu-node-1")["spec"] == {"unschedulable": True}


async def test_a_viewer_may_list_nodes_but_not_cordon_before_any_cluster_request(
    stack: Stack,
) -> None:
    stack.sim.clear_requests()
    for text in ("cordon gpu-node-1", "uncordon gpu-node-1"):
        reply = await stack.command(text, user_id=VIEWER)
        assert "You are not allowed to" in reply.text, reply.text
    assert stack.sim.requests == []


async def test_a_timed_cordon_ends_by_itself_after_a_restart_and_says_so(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    await confirmed(stack, "cordon gpu-node-2 for 2h drain test")
    await stack.restart_service()
    deps = stack.service.deps

    clock.now += timedelta(hours=1)
    early = await expiry.sweep(deps.kube_for(None), deps.slack, ALERT_CHANNEL, deps.clock())
    assert early.uncordoned == [] and early.next_due == START + timedelta(hours=2)
    assert node(stack, "gpu-node-2")["spec"]["unschedulable"] is True

    clock.now += timedelta(hours=1, minutes=1)
    done = await expiry.sweep(deps.kube_for(None), deps.slack, ALERT_CHANNEL, deps.clock())

    assert [p.target.name for p in done.uncordoned] == ["gpu-node-2"]
    after = node(stack, "gpu-node-2")
    assert after["spec"]["unschedulable"] is False and ours(after) == {}
    (post,) = channel_texts(stack, ALERT_CHANNEL)
    assert "Node gpu-node-2 on sim uncordoned automatically after 2h" in post
    assert f"cordoned by <@{OPERATOR}> at 2026-08-24 08:00 UTC" in post
    assert [(r["user"], r["action"], r["outcome"]) for r in audit_lines(caplog)][-1] == (
        "kai-chatops",
        "uncordon",
        "ok",
    )


async def test_the_timed_cordon_sweep_leaves_a_cordon_changed_by_hand_alone(
    stack: Stack, clock: Clock
) -> None:
    await confirmed(stack, "cordon gpu-node-1 for 1h")
    later = {"kai-chatops/cordon-until": "2026-08-24T18:00:00Z"}
    stack.sim.patch("v1", "Node", "gpu-node-1", patch={"metadata": {"annotations": later}})
    deps = stack.service.deps
    clock.now += timedelta(hours=2)

    swept = await expiry.sweep(deps.kube_for(None), deps.slack, ALERT_CHANNEL, clock.now)

    assert swept.uncordoned == [] and swept.next_due is not None
    assert node(stack, "gpu-node-1")["spec"]["unschedulable"] is True


async def test_with_impersonation_a_cordon_is_sent_as_the_person_and_refused_without_rbac(
    tmp_path: Path,
) -> None:
    access = {"access": {"operators": ["@platform-oncall"], "impersonate": "id"}}
    async with running_stack(tmp_path, config_overrides=access) as stack:
        stack.sim.impersonation.grant("slack:oncall", "patch", "nodes")  # not this person

        _, refused = await confirmed(stack, "cordon gpu-node-1")

        assert (
            'nodes "gpu-node-1" is forbidden: User "slack:' + OPERATOR + '" cannot patch '
            'resource "nodes" in API group "" at the cluster scope'
        ) in refused["text"]
        assert "spec" not in node(stack, "gpu-node-1")

        stack.sim.impersonation.grant("slack:platform-oncall", "patch", "nodes")
        stack.sim.clear_requests()
        _, done = await confirmed(stack, "cordon gpu-node-1")
        assert "Cordoned Node gpu-node-1 on sim" in done["text"]
        (patch,) = patches(stack)
        assert patch.acting == Acting(
            f"slack:{OPERATOR}",
            ("slack:platform-oncall",),
            {"kai-chatops/slack-user": (OPERATOR,)},
        )


async def test_on_a_cluster_of_access_approval_a_cordon_waits_for_a_second_operator(
    tmp_path: Path, clock: Clock
) -> None:
    lead = "U0LEAD"
    overrides = approval_config(str(tmp_path / "kubeconfig"), ["@platform-leads"])
    async with running_stack(tmp_path, clock=clock, config_overrides=overrides) as stack:
        stack.slack.add_user(lead, "lead")
        stack.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, lead])
        stack.slack.add_usergroup("S0LEADS", "platform-leads", [lead])
        ask = await stack.command("cordon gpu-node-1 XID 94")
        assert ask.message is not None, ask.text
        waiting = await stack.click("Confirm", ask.message)
        assert "waits for a second operator's approval" in waiting.text, waiting.text
        assert "spec" not in node(stack, "gpu-node-1")

        change_id = waiting.text.split()[1]
        done = await stack.command(f"approve {change_id}", user_id=lead)

        assert "Cordoned Node gpu-node-1 on sim" in done.text, done.text
        after = node(stack, "gpu-node-1")
        assert after["spec"] == {"unschedulable": True}
        assert ours(after)["cordoned-by"] == OPERATOR
        assert ours(after)["approved-by"] == lead
