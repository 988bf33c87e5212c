"""The GPU node alert's words (`bot.alerts.gpu_nodes`) and `/kai nodes` (`bot.nodes.render`)."""

from __future__ import annotations

from objects import condition, gpu_pod, node

from bot.alerts import gpu_nodes
from bot.alerts.model import AlertKey, Severity
from bot.nodes import gpus, render
from bot.slack.blocks import neutralise

XID = "ErrorCode:DCGM_FR_XID_ERROR GPU:3 Detected XID 94 for GPU 3 password=hunter2"


def sick(**kwargs: object) -> gpus.GpuNode:
    found = gpus.read_gpu_node(node(**kwargs))  # type: ignore[arg-type]
    assert found is not None
    return found


def test_a_well_node_raises_nothing() -> None:
    assert gpu_nodes.gpu_node_alerts("prod", [sick()], command="/kai") == []


def test_a_gpu_lost_is_a_warning_naming_how_many_of_how_many() -> None:
    (seen,) = gpu_nodes.gpu_node_alerts("prod", [sick(allocatable=7)], command="/kai")
    assert seen.key == AlertKey("prod", "Node", "gpu-node-1", "GPUs")
    assert seen.severity is Severity.WARNING
    assert seen.title == "GPU node gpu-node-1: 1 of 8 GPUs lost"
    assert seen.reason == "GPUsNotAllocatable"
    assert "1 GPU of its 8 not allocatable: the device plugin advertises 7" in seen.message
    assert "It is not cordoned" in seen.message
    assert "`/kai cordon gpu-node-1 [for DURATION] [REASON]`" in seen.check_first


def test_a_failing_condition_gives_its_own_message_reason_and_time() -> None:
    cond = condition(
        "GpuMemWatch",
        "True",
        reason="GpuMemWatchIsNotHealthy",
        message=XID,
        at="2026-08-24T08:00:00Z",
    )
    (seen,) = gpu_nodes.gpu_node_alerts(
        "prod", [sick(allocatable=7, conditions=[cond])], command="/kai"
    )
    assert seen.title == "GPU node gpu-node-1: 1 of 8 GPUs lost; GpuMemWatch True"
    assert seen.reason == "GpuMemWatchIsNotHealthy"
    assert f"GpuMemWatch is True (GpuMemWatchIsNotHealthy): {XID}" in seen.message
    assert seen.since is not None and seen.since.isoformat() == "2026-08-24T08:00:00+00:00"


def test_not_ready_says_readys_reason_and_message_and_the_cordon() -> None:
    ready = condition("Ready", "Unknown", reason="NodeStatusUnknown", message="Kubelet stopped")
    obj = node(ready=None, conditions=[ready], unschedulable=True)
    found = gpus.read_gpu_node(obj)
    assert found is not None
    (seen,) = gpu_nodes.gpu_node_alerts("prod", [found], command="/kai")
    assert seen.title == "GPU node gpu-node-1: Ready Unknown"
    assert seen.reason == "NodeStatusUnknown"
    assert "Ready is Unknown (NodeStatusUnknown): Kubelet stopped" in seen.message
    assert "It is cordoned (by hand or by a health tool)" in seen.message
    (missing,) = gpu_nodes.gpu_node_alerts("prod", [sick(ready=None)], command="/kai")
    assert missing.title == "GPU node gpu-node-1: Ready missing"
    (down,) = gpu_nodes.gpu_node_alerts("prod", [sick(ready="False")], command="/kai")
    assert down.title == "GPU node gpu-node-1: NotReady" and down.reason == "KubeletReady"


def test_is_gpu_node_knows_its_own_keys_only() -> None:
    assert gpu_nodes.is_gpu_node(AlertKey("p", "Node", "n", "GPUs"))
    assert not gpu_nodes.is_gpu_node(AlertKey("p", "Queue", "n", "GPUs"))
    assert not gpu_nodes.is_gpu_node(AlertKey("p", "Node", "n", "Starved"))


def test_nodes_lists_sick_nodes_first_with_gpus_cordon_and_conditions_redacted() -> None:
    cond = condition("GpuMemWatch", "True", reason="GpuMemWatchIsNotHealthy", message=XID)
    notes = {gpus.CORDONED_BY: "U1", gpus.CORDON_REASON: "<!here> xid", gpus.CORDON_UNTIL: "x"}
    nodes = gpus.gpu_nodes(
        [
            node("gpu-a"),
            node("gpu-b", allocatable=7, conditions=[cond], unschedulable=True, annotations=notes),
            node("cpu", gpus=None),
        ],
        [gpu_pod("p", "gpu-a", 4), gpu_pod("q", "gpu-b", 2)],
    )
    message = render.nodes_message(nodes, total=3, cluster="prod", command="/kai")
    text = neutralise(message["text"])
    assert text.index("gpu-b") < text.index("gpu-a")  # the sick one first
    assert "2 of 3 nodes have GPUs · 15 of 16 GPUs allocatable · 6 allocated" in text
    assert "gpu-b: Ready · GPUs 8 / 7 / 2 (1 lost: not allocatable)" in text
    assert "gpu-a: Ready · GPUs 8 / 8 / 4" in text
    assert "cordoned by U1, until 'x': &lt;!here&gt; xid" in text
    assert "GpuMemWatch True (GpuMemWatchIsNotHealthy) [failing]" in text
    assert "hunter2" not in text and "<!here>" not in text
    blocks = str(message["blocks"])
    assert "hunter2" not in blocks and "<!here>" not in blocks


def test_nodes_on_a_cluster_without_gpus_says_so() -> None:
    message = render.nodes_message([], total=4, cluster="prod", command="/kai")
    assert "No node on prod has nvidia.com/gpu capacity (4 nodes in all)" in message["text"]


def test_a_long_condition_message_is_cut() -> None:
    assert len(render.shown_message("x " * 1000)) == render.MESSAGE_CHARS


def test_the_evidence_shows_the_node_now_or_that_it_is_gone() -> None:
    found = sick(allocatable=7)
    assert (
        "gpu-node-1: Ready · GPUs 8 / 7 / ?"
        in render.node_evidence(found, "gpu-node-1", "p", "/k")["text"]
    )
    gone = render.node_evidence(None, "gpu-node-1", "prod", "/kai")["text"]
    assert gone == "Node gpu-node-1 is gone from prod, or no longer has GPUs."
