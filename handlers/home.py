"""The App Home tab, published on `app_home_opened` and its `Refresh` button, and `/kai changes`;
what both read is `bot.home.usecase`'s. Viewers see the tab, anyone else a view saying they may
not. It goes out with Bolt's `views.publish` (a view is not a message: not `bot.slack.gateway`).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import errors
from bot.home import render, usecase
from bot.home.commands import ShowChanges
from bot.service.deps import Deps
from bot.slack.blocks import Message
from handlers.invocation import Invocation, Runner

log = logging.getLogger(__name__)


async def on_home_opened(
    event: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
) -> None:
    """`app_home_opened` (Events API): publish the Home tab of the user who opened it."""
    if event.get("tab", "home") != "home":  # the Messages tab: nothing to publish
        return
    # The event is answered when this listener returns (`process_before_response`): publish
    # after that, in flight (a shutdown waits for it).
    deps: Deps = context["deps"]
    work = publish(deps, client, str(event.get("user", "")))
    deps.inflight.spawn(work, first_time=context.get("first_time"))


async def on_refresh(
    ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: dict[str, Any]
) -> None:
    """`Refresh` on the Home tab: ack at once, then publish it again."""
    await ack()
    deps: Deps = context["deps"]
    work = publish(deps, client, str(body.get("user", {}).get("id", "")))
    deps.inflight.spawn(work, first_time=context.get("first_time"))


async def publish(deps: Deps, client: AsyncWebClient, user_id: str) -> None:
    """Build and publish the user's Home view; a failure is logged (the tab keeps its last view)."""
    try:
        await deps.gate.require_viewer(user_id, "see the kai-chatops Home tab")
    except errors.NotAllowed as e:
        view = render.not_allowed_view(str(e))
    else:
        view = render.home_view(await usecase.read_home(deps), deps.settings.slack.command)
    try:
        await client.views_publish(user_id=user_id, view=view)
    except SlackApiError as e:
        log.error("could not publish the Home tab of %s: %s", user_id, e.response.get("error"))


async def run_changes(parsed: ShowChanges, deps: Deps, invocation: Invocation) -> Message:
    """`/kai changes [--cluster NAME]`: the pauses and suspends in force, privately."""
    await deps.gate.require_viewer(invocation.user_id, "list the changes in force")
    message = await usecase.changes_in_force(deps, parsed.cluster)
    return {**message, "response_type": "ephemeral"}


RUNNERS: dict[type, Runner] = {ShowChanges: run_changes}


def register(app: AsyncApp) -> None:
    """Attach the `app_home_opened` event and the tab's `Refresh` button."""
    app.event("app_home_opened")(on_home_opened)
    app.action(render.REFRESH_ACTION)(on_refresh)
