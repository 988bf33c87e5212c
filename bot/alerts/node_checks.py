"""The reads behind the GPU node alert: which GPU nodes are sick at a check, and the evidence
posted as the first reply in a node's thread.

I/O through the `KubeReader` port only: one unfiltered list of Nodes, which a check's reads
(`bot.kube.informer.CachedKube`) answer from a copy followed by list-then-watch, so a check at
rest asks the API server nothing. With `alerts.gpu_nodes` off a check reads nothing here (and
follows no Nodes). The decisions are `bot.nodes.gpus`' and the words `bot.alerts.gpu_nodes`'.
"""

from __future__ import annotations

import logging

from bot.alerts import gpu_nodes
from bot.alerts.model import AlertKey, Observation
from bot.core import errors
from bot.diagnostics import render as render_diagnosis
from bot.kube import kinds
from bot.kube.ports import KubeReader
from bot.nodes import gpus, usecase
from bot.nodes import render as render_nodes
from bot.slack.blocks import Message

log = logging.getLogger(__name__)


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
    subject = f"node {key.object}"
    try:
        node = await usecase.read_node_now(kube, key.object)
    except errors.KubeError as e:
        log.warning("no evidence of %s on %s: %s", subject, key.cluster, e)
        return render_diagnosis.failed_message(subject, key.cluster, e)
    except Exception:  # a bug must not cost the page its thread: say it, log it
        log.exception("gathering the evidence of %s on %s failed", subject, key.cluster)
        error = RuntimeError("an internal error (the details are in the service log)")
        return render_diagnosis.failed_message(subject, key.cluster, error)
    return render_nodes.node_evidence(node, key.object, key.cluster, command)
