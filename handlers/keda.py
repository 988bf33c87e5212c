"""Listeners for `/kai scaledjobs`, `/kai pause` and `/kai resume` (docs/design.md §1.3).

Viewers may list; pause and resume are changes (`bot.keda.change`, through `bot.changes`).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.keda import change, commands, render, usecase
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Invocation, Runner, asking


async def run_scaledjobs(
    parsed: commands.ScaledJobs, deps: Deps, invocation: Invocation
) -> Message:
    """`/kai scaledjobs [NAMESPACE | --all-namespaces]`: verdicts and pauses, privately."""
    await deps.gate.require_viewer(invocation.user_id, "list ScaledJobs")
    kube = deps.kube_for(parsed.cluster)
    rows, scope = await usecase.listing(kube, parsed, deps.settings)
    command, now = deps.settings.slack.command, deps.clock()
    message = render.listing_message(
        rows, cluster=kube.cluster, scope=scope, now=now, command=command
    )
    return {**message, "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {
    commands.ScaledJobs: run_scaledjobs,
    commands.Pause: asking(change.PAUSE, change.pausing),
    commands.Resume: asking(change.RESUME, change.resuming),
}


def register(app: AsyncApp) -> None:
    """Attach this feature's button listeners (none: Confirm and Cancel are shared)."""
