"""`SlackDriver`: plays the Slack side towards the bot, as a user typing commands and clicking.

In HTTP mode it signs and POSTs what Slack would to the bot's `/slack/events`; in Socket Mode it
sends envelopes over the emulator's websocket. Either way it returns the bot's ack and the
response_url the bot should answer on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlencode

import aiohttp

from testbed.slackemu.payloads import (
    Origin,
    app_home_opened_body,
    block_actions_payload,
    button_action,
    message_container,
    sign_request,
    slash_command_fields,
    view_actions_payload,
)
from testbed.slackemu.records import PostedMessage
from testbed.slackemu.server import SlackEmulator

Mode = Literal["auto", "http", "socket"]


@dataclass(frozen=True)
class SignedRequest:
    """A request as Slack would POST it to the bot: form body, headers, its response_url."""

    body: str
    headers: dict[str, str]
    response_url: str

    @property
    def hook_id(self) -> str:
        return SlackEmulator.hook_id_of(self.response_url)


@dataclass(frozen=True)
class Delivery:
    """How the bot took one command or click.

    `status` is the HTTP status in HTTP mode; in Socket Mode 200 once acked and None when no ack
    came in time. `body` is the ack payload: parsed JSON, plain text, or None when empty.
    `latency` is seconds from sending to the ack. Wait for the bot's reply with
    `emulator.wait_for_response(delivery.hook_id)`.
    """

    mode: Literal["http", "socket"]
    status: int | None
    body: Any
    latency: float
    response_url: str
    hook_id: str
    envelope_id: str | None = None

    @property
    def acked(self) -> bool:
        """Whether the bot acknowledged in time with a 200."""
        return self.status == 200

    @property
    def ack_text(self) -> str:
        """The ack's message text, as Slack reads it: a plain-text body or the JSON `text`.

        (Bolt sends `ack(text=...)` alone as text/plain over HTTP, and as `{"text": ...}` over
        Socket Mode.)
        """
        if isinstance(self.body, str):
            return self.body
        if isinstance(self.body, Mapping):
            return str(self.body.get("text") or "")
        return ""


class SlackDriver:
    """Sends slash commands and button clicks to a bot, the way Slack would.

    `mode="auto"` uses Socket Mode while a client is connected to the emulator, else HTTP
    (which needs `bot_url`, e.g. `http://127.0.0.1:3000/slack/events`, and `signing_secret`).
    Close it with `aclose()` or use `async with`.
    """

    def __init__(
        self,
        emulator: SlackEmulator,
        *,
        bot_url: str | None = None,
        signing_secret: str | None = None,
        verification_token: str = "emulator-verification-token",
        http_timeout: float = 10.0,
    ) -> None:
        self.emulator = emulator
        self.bot_url = bot_url
        self.signing_secret = signing_secret
        self.verification_token = verification_token
        self._http_timeout = http_timeout
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> SlackDriver:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP session (if one was opened)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send_command(
        self,
        text: str,
        *,
        user_id: str,
        channel_id: str = "C0DEMO",
        command: str = "/kai",
        mode: Mode = "auto",
        signature: str | None = None,
        timestamp_offset: int = 0,
        ack_timeout: float = 5.0,
    ) -> Delivery:
        """Send `/kai <text>` from a user in a channel, with a fresh response_url.

        Args:
            signature: send this `X-Slack-Signature` instead of the right one (HTTP only).
            timestamp_offset: seconds added to the signed timestamp; -400 makes it stale.
            ack_timeout: how long to wait for a Socket Mode ack.

        Raises:
            ValueError: HTTP mode without `bot_url` or `signing_secret`.
            ConnectionError: Socket Mode asked for but no client is connected.
        """
        response_url = self.emulator.new_response_url(channel_id=channel_id)
        fields = slash_command_fields(
            self._origin(user_id, channel_id), text=text, command=command, response_url=response_url
        )
        if self._resolve(mode) == "socket":
            return await self._send_envelope("slash_commands", fields, response_url, ack_timeout)
        return await self._post(urlencode(fields), response_url, signature, timestamp_offset)

    def signed_command(
        self, text: str, *, user_id: str, channel_id: str = "C0DEMO", command: str = "/kai"
    ) -> SignedRequest:
        """`/kai <text>` as Slack would POST it, signed now, with a fresh response_url, not sent
        (for load generators that send many at once)."""
        if self.signing_secret is None:
            raise ValueError("signing needs SlackDriver(signing_secret=...)")
        response_url = self.emulator.new_response_url(channel_id=channel_id)
        fields = slash_command_fields(
            self._origin(user_id, channel_id), text=text, command=command, response_url=response_url
        )
        body = urlencode(fields)
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": sign_request(self.signing_secret, timestamp, body),
        }
        return SignedRequest(body, headers, response_url)

    async def click_button(
        self,
        action_id: str,
        value: str | None = None,
        *,
        user_id: str,
        channel_id: str,
        message_ts: str | None = None,
        response_url: str | None = None,
        block_id: str | None = None,
        message: Mapping[str, Any] | None = None,
        mode: Mode = "auto",
        signature: str | None = None,
        timestamp_offset: int = 0,
        ack_timeout: float = 5.0,
    ) -> Delivery:
        """Click a button: send a `block_actions` payload with a fresh response_url.

        The button is looked up by `action_id` in the channel message `message_ts` (included as
        the payload's `message`), or else in `message` (e.g. an ephemeral reply's body; Slack
        sends no `message` for ephemeral ones); it supplies `block_id`, `value` and the label
        when they are not given. Other arguments are as for `send_command`.
        """
        stored = self._stored_message(channel_id, message_ts)
        source = stored.as_payload() if stored is not None else (message or {})
        action = button_action(
            source.get("blocks") or [],
            action_id,
            block_id=block_id,
            value=value,
            action_ts=f"{time.time():.6f}",
        )
        response_url = response_url or self.emulator.new_response_url(
            channel_id=channel_id, message_ts=stored.ts if stored is not None else None
        )
        payload = block_actions_payload(
            self._origin(user_id, channel_id),
            action=action,
            container=message_container(
                channel_id,
                message_ts or source.get("ts") or self.emulator.workspace.next_ts(),
                is_ephemeral=stored is None,
            ),
            message=source if stored is not None else None,
            response_url=response_url,
        )
        if self._resolve(mode) == "socket":
            return await self._send_envelope("interactive", payload, response_url, ack_timeout)
        body = urlencode({"payload": json.dumps(payload)})
        return await self._post(body, response_url, signature, timestamp_offset)

    async def open_home(
        self,
        *,
        user_id: str,
        mode: Mode = "auto",
        signature: str | None = None,
        timestamp_offset: int = 0,
        ack_timeout: float = 5.0,
    ) -> Delivery:
        """The user opens the app's Home tab: Slack sends `app_home_opened` (Events API), with
        the tab's current view once one was published. Arguments are as for `send_command`."""
        ws = self.emulator.workspace
        body = app_home_opened_body(
            self._origin(user_id, ""),
            bot_user_id=ws.bot_user_id,
            event_ts=ws.next_ts(),
            view=ws.home_tabs.get(user_id),
        )
        if self._resolve(mode) == "socket":
            return await self._send_envelope("events_api", body, "", ack_timeout)
        return await self._post(
            json.dumps(body), "", signature, timestamp_offset, content_type="application/json"
        )

    async def click_home_button(
        self, action_id: str, *, user_id: str, mode: Mode = "auto", ack_timeout: float = 5.0
    ) -> Delivery:
        """Click a button in the user's Home tab (as last published): a `block_actions`
        payload from a view, with no response_url.

        Raises:
            LookupError: nothing was published to that user's Home tab.
        """
        view = self.emulator.workspace.home_tabs.get(user_id)
        if view is None:
            raise LookupError(f"no Home tab was published for {user_id}")
        action = button_action(
            view.get("blocks") or [],
            action_id,
            block_id=None,
            value=None,
            action_ts=f"{time.time():.6f}",
        )
        payload = view_actions_payload(self._origin(user_id, ""), action=action, view=view)
        if self._resolve(mode) == "socket":
            return await self._send_envelope("interactive", payload, "", ack_timeout)
        return await self._post(urlencode({"payload": json.dumps(payload)}), "", None, 0)

    async def wait_socket_connected(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Wait until the bot's Socket Mode client is connected to the emulator.

        Raises:
            TimeoutError: not within `timeout` seconds.
        """
        await self.emulator.wait_socket_connected(timeout)

    async def post_signed(
        self, body: str, *, signature: str | None = None, timestamp_offset: int = 0
    ) -> Delivery:
        """POST any form body to the bot, signed (for payloads the helpers do not build)."""
        return await self._post(body, "", signature, timestamp_offset)

    def _resolve(self, mode: Mode) -> Literal["http", "socket"]:
        if mode == "auto":
            return "socket" if self.emulator.socket.is_connected else "http"
        return mode

    def _origin(self, user_id: str, channel_id: str) -> Origin:
        user = self.emulator.workspace.users.get(user_id)
        return Origin(
            user_id=user_id,
            user_name=user.name if user is not None else user_id.lower(),
            channel_id=channel_id,
            team_id=self.emulator.workspace.team_id,
            api_app_id=self.emulator.workspace.app_id,
            verification_token=self.verification_token,
        )

    def _stored_message(self, channel_id: str, message_ts: str | None) -> PostedMessage | None:
        if message_ts is None:
            return None
        try:
            return self.emulator.message(channel_id, message_ts)
        except LookupError:
            return None

    async def _send_envelope(
        self, envelope_type: str, payload: Mapping[str, Any], response_url: str, ack_timeout: float
    ) -> Delivery:
        started = time.perf_counter()
        envelope_id, ack = await self.emulator.socket.send_envelope(
            envelope_type,
            payload,
            accepts_response_payload=envelope_type == "slash_commands",
            ack_timeout=ack_timeout,
        )
        return Delivery(
            mode="socket",
            status=200 if ack is not None else None,
            body=ack.payload if ack is not None else None,
            latency=time.perf_counter() - started,
            response_url=response_url,
            hook_id=SlackEmulator.hook_id_of(response_url) if response_url else "",
            envelope_id=envelope_id,
        )

    async def _post(
        self,
        body: str,
        response_url: str,
        signature: str | None,
        timestamp_offset: int,
        *,
        content_type: str = "application/x-www-form-urlencoded",
    ) -> Delivery:
        if self.bot_url is None or self.signing_secret is None:
            raise ValueError("HTTP mode needs SlackDriver(bot_url=..., signing_secret=...)")
        timestamp = str(int(time.time()) + timestamp_offset)
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": signature or sign_request(self.signing_secret, timestamp, body),
        }
        started = time.perf_counter()
        async with self._http().post(self.bot_url, data=body, headers=headers) as response:
            ack_body = _parse_ack(response.content_type, await response.text())
            status = response.status
        return Delivery(
            mode="http",
            status=status,
            body=ack_body,
            latency=time.perf_counter() - started,
            response_url=response_url,
            hook_id=SlackEmulator.hook_id_of(response_url) if response_url else "",
        )

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=self._http_timeout)
            self._session = aiohttp.ClientSession(timeout=timeout)
        return self._session


def _parse_ack(content_type: str, text: str) -> Any:
    if not text:
        return None
    if content_type == "application/json":
        return json.loads(text)
    return text
