"""Listeners for `/kai nodes`, `/kai cordon` and `/kai uncordon` (docs/design.md §2 "GPU nodes").

Viewers may list; cordon and uncordon are changes (`bot.nodes.change`, through `bot.changes`).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.nodes import change, commands, render, usecase
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Invocation, Runner, asking


async def run_nodes(parsed: commands.ShowNodes, deps: Deps, invocation: Invocation) -> Message:
    """`/kai nodes`: every GPU node's GPUs, cordon and GPU conditions, privately."""
    await deps.gate.require_viewer(invocation.user_id, "list GPU nodes")
    kube = deps.kube_for(parsed.cluster)
    view = await usecase.read_nodes(kube)
    message = render.nodes_message(
        view.nodes, total=view.total, cluster=kube.cluster, command=deps.settings.slack.command
    )
    return {**message, "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {
    commands.ShowNodes: run_nodes,
    commands.Cordon: asking(change.CORDON, change.cordoning),
    commands.Uncordon: asking(change.UNCORDON, change.uncordoning),
}


def register(app: AsyncApp) -> None:
    """Attach this feature's button listeners (none: Confirm and Cancel are shared)."""
