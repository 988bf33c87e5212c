"""Raw HTTP requests to the service's `POST /slack/events`, headers exactly as a test chooses.

The driver always sends well-formed, freshly signed requests; an attacker does not. These build
a slash command or a button click as Slack would, sign it (or not), and send the very same
bytes as often as asked, as a replay would.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import aiohttp

from testbed.slackemu.driver import SignedRequest
from testbed.slackemu.payloads import (
    Origin,
    block_actions_payload,
    button_action,
    message_container,
    sign_request,
    slash_command_fields,
)
from testbed.stack import DEMO_CHANNEL, OPERATOR, Stack, find_button

# A request body and its headers, ready to be sent (again and again).
RawRequest = SignedRequest


def origin(stack: Stack, user_id: str = OPERATOR, channel_id: str = DEMO_CHANNEL) -> Origin:
    return Origin(
        user_id=user_id,
        user_name=user_id.lower(),
        channel_id=channel_id,
        team_id=stack.slack.workspace.team_id,
        api_app_id=stack.slack.workspace.app_id,
        verification_token="unused",
    )


def signed(stack: Stack, body: str, response_url: str, *, at: int | None = None) -> RawRequest:
    """`body` with a valid signature made now (or at `at`, seconds since the epoch)."""
    timestamp = str(int(time.time()) if at is None else at)
    secret = stack.driver.signing_secret
    assert secret is not None
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": sign_request(secret, timestamp, body),
    }
    return RawRequest(body, headers, response_url)


def command(
    stack: Stack,
    text: str,
    *,
    user_id: str = OPERATOR,
    channel_id: str = DEMO_CHANNEL,
    response_url: str | None = None,
    at: int | None = None,
) -> RawRequest:
    """A signed `/kai TEXT` (the response_url is a fresh emulator hook unless given)."""
    url = response_url or stack.slack.new_response_url(channel_id=channel_id)
    fields = slash_command_fields(
        origin(stack, user_id, channel_id), text=text, command="/kai", response_url=url
    )
    return signed(stack, urlencode(fields), url, at=at)


def click(
    stack: Stack,
    label: str,
    message: Mapping[str, Any],
    *,
    user_id: str = OPERATOR,
    channel_id: str = DEMO_CHANNEL,
) -> RawRequest:
    """A signed click on the button labelled `label` of an ephemeral `message`."""
    blocks = message.get("blocks") or []
    action = button_action(
        blocks, find_button(message, label), block_id=None, value=None, action_ts=str(time.time())
    )
    url = stack.slack.new_response_url(channel_id=channel_id)
    payload = block_actions_payload(
        origin(stack, user_id, channel_id),
        action=action,
        container=message_container(channel_id, "1.000001", is_ephemeral=True),
        message=None,
        response_url=url,
    )
    return signed(stack, urlencode({"payload": json.dumps(payload)}), url)


async def send(stack: Stack, request: RawRequest, *, port: int | None = None) -> tuple[int, str]:
    """POST it to the service (or the replica on `port`); the status and body of the answer."""
    url = f"http://127.0.0.1:{port or stack.service.port}/slack/events"
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, data=request.body.encode(), headers=dict(request.headers)) as answer,
    ):
        return answer.status, await answer.text()
