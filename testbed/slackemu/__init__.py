"""A local Slack for tests, benchmarks and `kai-chatops demo`: Web API, response_urls, Socket Mode.

    async with SlackEmulator() as slack:
        user = SlackDriver(slack, bot_url=..., signing_secret=...)
        delivery = await user.send_command("health", user_id="U1")
        reply = await slack.wait_for_response(delivery.hook_id)
        await user.aclose()

Imports nothing from the bot except `bot.slack.limits`; serves on 127.0.0.1 only.
"""

from __future__ import annotations

from testbed.slackemu.driver import Delivery, SlackDriver
from testbed.slackemu.holding import Hold, metadata_by
from testbed.slackemu.records import (
    ApiCall,
    EphemeralMessage,
    HookPost,
    PostedMessage,
    SocketAck,
    User,
    UserGroup,
    Violation,
)
from testbed.slackemu.server import DEFAULT_APP_TOKEN, DEFAULT_BOT_TOKEN, SlackEmulator

__all__ = [
    "DEFAULT_APP_TOKEN",
    "DEFAULT_BOT_TOKEN",
    "ApiCall",
    "Delivery",
    "EphemeralMessage",
    "Hold",
    "HookPost",
    "PostedMessage",
    "SlackDriver",
    "SlackEmulator",
    "SocketAck",
    "User",
    "UserGroup",
    "Violation",
    "metadata_by",
]
