"""The GPU node alert: one warning per node with `nvidia.com/gpu` capacity that lost GPUs, is
not Ready, or reports a GPU fault in a node condition (docs/design.md §2 "GPU nodes"), in the
words of an alert.

Pure. What counts as sick is `bot.nodes.gpus`' decision; this module names the GPUs lost, Ready's
and each failing condition's own message (the alert's rendering escapes and redacts them), and
whether the node is cordoned. The alert fires after `hold` and resolves once the node has been
well for `hold`, like every alert.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from bot.alerts.model import AlertKey, Observation, Severity
from bot.nodes.gpus import GpuNode

KIND = "Node"
CONDITION = "GPUs"
_CHECK_FIRST = (
    "`{command} nodes` shows its GPUs, pods and conditions now. `{command} cordon {node} "
    "[for DURATION] [REASON]` keeps new pods off it while it is looked at (nothing running is "
    "drained). A GPU the device plugin marked unhealthy comes back only when the plugin is "
    "restarted (NVIDIA/k8s-device-plugin issue 234); the health tool that wrote a condition "
    "clears it when the GPU is well."
)


def gpu_node_alerts(cluster: str, nodes: Iterable[GpuNode], *, command: str) -> list[Observation]:
    """One warning per sick GPU node of `cluster`; `command` is the configured slash command."""
    return [_observation(cluster, node, command) for node in nodes if node.is_sick]


def is_gpu_node(key: AlertKey) -> bool:
    return key.kind == KIND and key.condition == CONDITION


def _observation(cluster: str, node: GpuNode, command: str) -> Observation:
    return Observation(
        key=AlertKey(cluster, KIND, node.name, CONDITION),
        severity=Severity.WARNING,
        title=f"GPU node {node.name}: {'; '.join(troubles(node))}",
        reason=_reason(node),
        message="\n".join(message_lines(node)),
        check_first=_CHECK_FIRST.format(command=command, node=node.name),
        since=_since(node),
    )


def troubles(node: GpuNode) -> list[str]:
    """`1 of 8 GPUs lost`, `NotReady`, `GpuMemWatch True`: what is wrong, shortest first."""
    found = [f"{node.lost} of {node.capacity} GPUs lost"] if node.lost else []
    if not node.is_ready:
        found.append("NotReady" if node.ready == "False" else f"Ready {node.ready or 'missing'}")
    found += [f"{cond.type} {cond.status}" for cond in node.failing]
    return found


def message_lines(node: GpuNode) -> list[str]:
    """The GPUs lost, then Ready's and each failing condition's own message, then its cordon."""
    lines = []
    if node.lost:
        lost = f"{node.lost} GPU{'s' if node.lost != 1 else ''}"
        lines.append(
            f"{lost} of its {node.capacity} not allocatable: the device plugin advertises "
            f"{node.allocatable} (it withdraws a GPU it marks unhealthy, e.g. after an XID error)."
        )
    if not node.is_ready:
        reason = f" ({node.ready_reason})" if node.ready_reason else ""
        said = f": {node.ready_message}" if node.ready_message else ""
        lines.append(f"Ready is {node.ready or 'missing'}{reason}{said}")
    for cond in node.failing:
        reason = f" ({cond.reason})" if cond.reason else ""
        said = f": {cond.message}" if cond.message else ""
        lines.append(f"{cond.type} is {cond.status}{reason}{said}")
    cordon = node.cordon
    if not cordon.cordoned:
        lines.append("It is not cordoned: new pods may still be scheduled on it.")
    else:
        who = f" by {cordon.by}" if cordon.by else " (by hand or by a health tool)"
        lines.append(f"It is cordoned{who}: no new pods land on it.")
    return lines


def _reason(node: GpuNode) -> str:
    if node.failing:
        return node.failing[0].reason or node.failing[0].type
    if not node.is_ready:
        return node.ready_reason or "NotReady"
    return "GPUsNotAllocatable"


def _since(node: GpuNode) -> datetime | None:
    """When the earliest failing condition says it began (the GPUs lost carry no time)."""
    times = [cond.since for cond in node.failing if cond.since is not None]
    return min(times, default=None)
