"""The reads behind the GPU node alert: which GPU nodes are sick at a check, and the evidence
posted as the first reply in a node's thread.

I/O through the `KubeReader` port only: one unfiltered list of Nodes, which a check's reads
(`bot.kube.informer.CachedKube`) answer from a copy followed by list-then-watch, so a check at
rest asks the API server nothing. With `alerts.gpu_nodes` off a check reads nothing here (and
follows no Nodes). The decisions are `bot.nodes.gpus`' and the words `bot.alerts.gpu_nodes`'.
"""

from __future__ import annotations

from bot.alerts import evidence_reads, gpu_nodes
from bot.alerts.model import AlertKey, Observation
from bot.kube import kinds
from bot.kube.ports import KubeReader
from bot.nodes import gpus, usecase
from bot.nodes import render as render_nodes
from bot.slack.blocks import Message


async def sick_nodes(kube: KubeReader, *, enabled: bool, command: str) -> list[Observation]:
    """One warning per sick GPU node of `kube.cluster`; none when the rule is off.

    Raises:
        KubeError: unreachable, or the list is forbidden (the check fails: never a false
            "resolved").
    """
    if not enabled:
        return []
    nodes = await kube.list_objects(kinds.NODE)
    return gpu_nodes.gpu_node_alerts(kube.cluster, gpus.gpu_nodes(nodes), command=command)


async def node_evidence(kube: KubeReader, key: AlertKey, *, command: str) -> Message:
    """The node as `/kai nodes` shows it now, with its pods' GPUs; one line when the cluster
    would not say. Never raises."""

    async def read() -> Message:
        node = await usecase.read_node_now(kube, key.object)
        return render_nodes.node_evidence(node, key.object, key.cluster, command)

    return await evidence_reads.read_or_say(f"node {key.object}", key.cluster, read)
