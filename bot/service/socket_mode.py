"""Socket Mode's handler, in a module of its own so that HTTP mode never imports it.

Bolt's Socket Mode adapter brings slack_sdk's Socket Mode clients with it: start-up time a
service that listens on `POST /slack/events` would pay for nothing (bench/startup.py).
"""

from __future__ import annotations

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

from bot.service.inflight import InFlight


class SocketModeHandler(AsyncSocketModeHandler):
    """Bolt's Socket Mode handler, each envelope counted as being acked until its ack is sent,
    so that work after other acks waits for it (`InFlight.acking`), as in HTTP mode."""

    def __init__(
        self, app: AsyncApp, app_token: str | None, client: AsyncWebClient, inflight: InFlight
    ) -> None:
        super().__init__(app, app_token, web_client=client)
        self._inflight = inflight

    async def handle(self, client: AsyncBaseSocketModeClient, req: SocketModeRequest) -> None:
        with self._inflight.acking():
            await super().handle(client, req)  # type: ignore[arg-type]
