"""What Slack sends a bot: slash command fields, block_actions payloads, request signatures.

Pure builders with no I/O; the driver fills in ids, times and response_urls and sends them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Origin:
    """Who acts and where: the user, channel, team and app that every payload names."""

    user_id: str
    user_name: str
    channel_id: str
    team_id: str
    api_app_id: str
    verification_token: str

    @property
    def channel_name(self) -> str:
        """A channel name for the payload (the emulator has no channel directory)."""
        return self.channel_id.lower()


def sign_request(signing_secret: str, timestamp: str, body: str) -> str:
    """Slack's `X-Slack-Signature`: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}`."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def new_trigger_id() -> str:
    """A trigger_id shaped like Slack's (only its uniqueness matters here)."""
    return f"{secrets.randbelow(10**13)}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}"


def slash_command_fields(
    origin: Origin, *, text: str, command: str, response_url: str
) -> dict[str, str]:
    """The fields of a slash command, as Slack form-encodes them (HTTP) or nests them (Socket)."""
    return {
        "token": origin.verification_token,
        "team_id": origin.team_id,
        "team_domain": "emulator",
        "channel_id": origin.channel_id,
        "channel_name": origin.channel_name,
        "user_id": origin.user_id,
        "user_name": origin.user_name,
        "command": command,
        "text": text,
        "api_app_id": origin.api_app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": new_trigger_id(),
    }


def button_action(
    blocks: Sequence[Mapping[str, Any]],
    action_id: str,
    *,
    block_id: str | None,
    value: str | None,
    action_ts: str,
) -> dict[str, Any]:
    """One `actions` entry for a clicked button.

    The button is looked up by `action_id` in `blocks`; it supplies `block_id`, `value`, label
    and style where the caller gave none.
    """
    block_id_found, button = _find_button(blocks, action_id)
    label = (button.get("text") or {}).get("text", action_id)
    action: dict[str, Any] = {
        "action_id": action_id,
        "block_id": block_id or block_id_found or f"emu-{action_id}",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "type": "button",
        "action_ts": action_ts,
    }
    if value is None:
        value = button.get("value")
    if value is not None:
        action["value"] = value
    if "style" in button:
        action["style"] = button["style"]
    return action


def message_container(channel_id: str, message_ts: str, *, is_ephemeral: bool) -> dict[str, Any]:
    """The `container` of an interaction with a message."""
    return {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel_id,
        "is_ephemeral": is_ephemeral,
    }


def block_actions_payload(
    origin: Origin,
    *,
    action: Mapping[str, Any],
    container: Mapping[str, Any],
    message: Mapping[str, Any] | None,
    response_url: str,
) -> dict[str, Any]:
    """A `block_actions` interactivity payload for one clicked button.

    `message` is the channel message the button is on; leave it None for an ephemeral one,
    whose payload Slack sends without it.
    """
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {
            "id": origin.user_id,
            "username": origin.user_name,
            "name": origin.user_name,
            "team_id": origin.team_id,
        },
        "api_app_id": origin.api_app_id,
        "token": origin.verification_token,
        "container": dict(container),
        "trigger_id": new_trigger_id(),
        "team": {"id": origin.team_id, "domain": "emulator"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": origin.channel_id, "name": origin.channel_name},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [dict(action)],
    }
    if message is not None:
        payload["message"] = dict(message)
    return payload


def _find_button(
    blocks: Sequence[Mapping[str, Any]], action_id: str
) -> tuple[str | None, Mapping[str, Any]]:
    """The (block_id, element) with this action_id; (None, {}) when no block has it."""
    for block in blocks:
        elements = [*(block.get("elements") or []), block.get("accessory")]
        for element in elements:
            if isinstance(element, Mapping) and element.get("action_id") == action_id:
                return block.get("block_id"), element
    return None, {}


def app_home_opened_body(
    origin: Origin, *, bot_user_id: str, event_ts: str, view: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The Events API body of `app_home_opened` (docs.slack.dev/reference/events/app_home_opened):
    the user opened the app's Home tab; `view` is the tab's current view once one was published.

    HTTP delivers it as a signed JSON POST; Socket Mode as the payload of an `events_api` envelope.
    """
    event: dict[str, Any] = {
        "type": "app_home_opened",
        "user": origin.user_id,
        "channel": "D" + origin.user_id[1:],  # the app's DM with the user
        "tab": "home",
        "event_ts": event_ts,
    }
    if view is not None:
        event["view"] = dict(view)
    return {
        "token": origin.verification_token,
        "team_id": origin.team_id,
        "api_app_id": origin.api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{secrets.token_hex(5).upper()}",
        "event_time": int(float(event_ts)),
        "authorizations": [{"team_id": origin.team_id, "user_id": bot_user_id, "is_bot": True}],
        "is_ext_shared_channel": False,
    }


def view_actions_payload(
    origin: Origin, *, action: Mapping[str, Any], view: Mapping[str, Any]
) -> dict[str, Any]:
    """A `block_actions` payload for a button clicked in a view (the Home tab): Slack sends the
    `view` and a `view` container, and neither a channel nor a response_url."""
    container = {"type": "view", "view_id": view.get("id", "")}
    payload = block_actions_payload(
        origin, action=action, container=container, message=None, response_url=""
    )
    del payload["channel"], payload["response_url"], payload["state"]
    return {**payload, "view": dict(view)}
