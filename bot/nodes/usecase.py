"""GPU nodes on one cluster: read them with their pods' GPUs, read one node for a cordon, and
write a cordon or uncordon as the node now stands.

The use-case layer: decisions are `bot.nodes.gpus`' and `bot.nodes.cordon`'s. `/kai nodes` makes a
constant number of requests whatever the node and pod count: one list of Nodes and one of the
pods that have not finished, across the cluster (the field selector `kubectl describe node`
uses, k8s.io/kubectl pkg/describe/describe.go `DescribeNode`, without naming a node), both paged.
Writes carry the resourceVersion read, so a concurrent change is read again and decided again,
never overwritten. No Slack here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.kube import kinds
from bot.kube.ports import KubeReader, KubeWriter
from bot.nodes import gpus
from bot.nodes.cordon import CordonPlan, NodeTarget
from bot.nodes.gpus import GpuNode

log = logging.getLogger(__name__)

# The pods that hold their GPUs: not finished (a Succeeded or Failed pod's GPUs are free).
NOT_FINISHED = "status.phase!=Succeeded,status.phase!=Failed"
CONFLICT_RETRIES = 5  # as `kubectl cordon` retries a conflicting write
CordonPlanMaker = Callable[[RawObject], CordonPlan]


@dataclass(frozen=True)
class NodesView:
    """What `/kai nodes` shows: the GPU nodes by name, and how many nodes there are in all."""

    nodes: list[GpuNode]
    total: int


async def read_nodes(kube: KubeReader) -> NodesView:
    """Every GPU node with the GPUs its pods hold (two lists, paged).

    Raises:
        KubeError: the cluster is unreachable or forbids a list.
    """
    nodes, pods = await asyncio.gather(
        kube.list_objects(kinds.NODE),
        kube.list_objects(kinds.POD, field_selector=NOT_FINISHED),
    )
    return NodesView(gpus.gpu_nodes(nodes, pods), len(nodes))


async def read_node_now(kube: KubeReader, name: str) -> GpuNode | None:
    """One GPU node as it is now, with its pods' GPUs (None: gone, or no GPUs); the evidence
    under its alert.

    Raises:
        KubeError: the cluster is unreachable or forbids a read.
    """
    selector = f"spec.nodeName={name},{NOT_FINISHED}"
    obj, pods = await asyncio.gather(
        kube.get_object(kinds.NODE, name),
        kube.list_objects(kinds.POD, field_selector=selector),
    )
    return (
        None if obj is None else gpus.read_gpu_node(obj, gpus.allocated_by_node(pods).get(name, 0))
    )


async def read_node(kube: KubeReader, target: NodeTarget) -> RawObject:
    """The node, read once; a name that is not a node is answered with the GPU nodes there are.

    Raises:
        UserError: no node of that name; KubeError: the cluster refused or is unreachable.
    """
    obj = await kube.get_object(kinds.NODE, target.name)
    if obj is not None:
        return obj
    names = [node.name for node in gpus.gpu_nodes(await kube.list_objects(kinds.NODE))]
    known = f"GPU nodes are {', '.join(names)}" if names else "it has no GPU nodes"
    raise errors.UserError(f"No node {target.name} on {target.cluster}; {known}. Nothing changed.")


async def prepare(kube: KubeReader, target: NodeTarget, make_plan: CordonPlanMaker) -> CordonPlan:
    """Read the node and decide (for the confirmation); writes nothing.

    Raises:
        UserError: no such node; KubeError: the cluster refused or is unreachable.
    """
    return make_plan(await read_node(kube, target))


async def apply_plan(
    kube: KubeWriter, target: NodeTarget, make_plan: CordonPlanMaker
) -> tuple[CordonPlan, RawObject | None]:
    """Read, decide, merge-patch with the resourceVersion read; on 409 read and decide again.

    Returns the plan and the node as the patch returned it (None when the plan refused).

    Raises:
        UserError: no such node; KubeError: forbidden, unreachable, or still conflicting after
            CONFLICT_RETRIES attempts.
    """
    for attempt in range(1, CONFLICT_RETRIES + 1):
        obj = await read_node(kube, target)
        plan = make_plan(obj)
        if plan.refusal:
            return plan, None
        version = conditions.as_text(conditions.metadata(obj).get("resourceVersion"))
        try:
            written = await kube.patch_object(
                kinds.NODE, target.name, None, plan.patch_body(version)
            )
        except errors.KubeConflict:
            if attempt == CONFLICT_RETRIES:
                raise
            log.info("%s changed while we patched it; reading it again", target.describe())
            continue
        return plan, written
    raise AssertionError("unreachable")
