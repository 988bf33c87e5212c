"""Slack's Web API rate limits: how many calls of each method an app may make in a minute.

Pure facts, no clock: the bot's client-side limiter (`bot.slack.budget`) spends this budget
and the local Slack emulator enforces it (`testbed.slackemu.ratelimits`), so no test passes
only because Slack is unlimited. Limits apply per method, per app and per workspace; above
them Slack answers HTTP 429 with `Retry-After` (seconds), and a call answered 429 was not
carried out. Sources: Slack's "Rate limits" guide (docs.slack.dev/apis/web-api/rate-limits)
and each method's reference page (docs.slack.dev/reference/methods/NAME), read 2026-12-03.
Internal, customer-built apps (how kai-chatops is installed) keep Tier 3 for
`conversations.history` and `conversations.replies`.
"""

from __future__ import annotations

PER_MINUTE = {1: 1, 2: 20, 3: 50, 4: 100}  # each tier's published floor ("N+ per minute")
# Tier 1: "a small amount of burst behavior is tolerated" (a Socket Mode reconnect or two).
TOLERATED_BURST = {1: 3}
TIER_OF = {
    "apps.connections.open": 1,
    "usergroups.list": 2,
    "usergroups.users.list": 2,
    "conversations.history": 3,
    "conversations.replies": 3,
    "chat.update": 3,
    "chat.delete": 3,
    "chat.postEphemeral": 4,
    "users.info": 4,
    "views.publish": 4,
    "files.getUploadURLExternal": 4,
    "files.completeUploadExternal": 4,
}
# `chat.postMessage` is of the special tier: "generally one message per second per channel",
# short bursts tolerated, with a workspace-wide limit above that.
POST_METHOD = "chat.postMessage"
POSTS_PER_CHANNEL_PER_MINUTE = 60
WINDOW_SECONDS = 60.0


def tolerated(method: str) -> int | None:
    """The calls of `method` Slack takes within any one minute, its tolerated burst included
    (what the emulator enforces); None as for `per_minute`."""
    tier = TIER_OF.get(method)
    return None if tier is None else max(PER_MINUTE[tier], TOLERATED_BURST.get(tier, 0))


def per_minute(method: str) -> int | None:
    """The calls of `method` (dotted, as Slack names it) an app may make in a minute, per
    workspace; None when the method has a limit of its own not modelled here (`auth.test`,
    `chat.postMessage`, which is limited per channel)."""
    tier = TIER_OF.get(method)
    return None if tier is None else PER_MINUTE[tier]
