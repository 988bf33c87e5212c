"""Listeners for `/kai timeline [--since DURATION]` and `/kai timeline ALERT_ID` (docs/design.md
§2 "What changed"). Viewers may run them; read-only (the draft is a file in the incident's
thread, shared through the Slack gateway).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.service.deps import Deps
from bot.slack.blocks import Message
from bot.timeline import usecase_incident
from bot.timeline.commands import IncidentTimeline, ShowTimeline
from handlers.invocation import Invocation, Runner


async def run_timeline(parsed: ShowTimeline, deps: Deps, invocation: Invocation) -> Message:
    """`/kai timeline [--since DURATION]`: what changed, newest first, privately."""
    await deps.gate.require_viewer(invocation.user_id, "see what changed")
    message = await deps.timeline.reply(deps.kube_for(parsed.cluster), parsed.since)
    return {**message, "response_type": "ephemeral"}


async def run_incident(parsed: IncidentTimeline, deps: Deps, invocation: Invocation) -> Message:
    """`/kai timeline ALERT_ID`: the postmortem draft, as a file in the incident's thread."""
    await deps.gate.require_viewer(invocation.user_id, "draft a postmortem")
    return await usecase_incident.post_draft(
        deps.timeline, deps.slack, deps.kube, parsed.alert_id, parsed.cluster
    )


RUNNERS: dict[type, Runner] = {ShowTimeline: run_timeline, IncidentTimeline: run_incident}


def register(app: AsyncApp) -> None:
    """No buttons of its own."""
