"""`POST /slack/events` in HTTP mode: the signature, then replays, then Bolt, in one handler.

Bolt's own aiohttp adapter (bolt-python slack_bolt/adapter/aiohttp/__init__.py and
slack_bolt/app/async_server.py) would do the same conversions behind our checks as middleware;
one handler keeps an ack's path to what it needs: read the body once, verify it, drop a replay,
dispatch to Bolt, answer with Bolt's response. The request counts as being acked
(`InFlight.acking`) from its first byte read to its answer, so work after other acks waits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.service import signing
from bot.service.inflight import InFlight

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"


class SlackEvents:
    """The handler of Slack's requests (commands, interactivity, events) to the bot."""

    def __init__(
        self,
        app: AsyncApp,
        secret: str,
        seen: signing.SeenRequests,
        inflight: InFlight,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._app, self._secret, self._seen = app, secret, seen
        self._inflight, self._clock = inflight, clock

    async def handle(self, request: web.Request) -> web.Response:
        """401 for a request whose signature cannot be verified (nothing else happens); 200 and
        nothing run for a replay; else Bolt's answer (the ack)."""
        with self._inflight.acking():
            body = await request.read()
            timestamp = request.headers.get("X-Slack-Request-Timestamp")
            signature = request.headers.get("X-Slack-Signature")
            now = self._clock()
            if not signing.is_verified(self._secret, body, timestamp, signature, now):
                log.warning("refused a request to %s: its Slack signature is not valid", SLACK_PATH)
                return web.Response(status=401)
            assert timestamp is not None and signature is not None  # verified above
            if not await self._seen.begin(signature, timestamp, now):
                log.warning("ignored a replayed Slack request (signed at %s)", timestamp)
                return web.Response(status=200)
            try:
                bolt_request = AsyncBoltRequest(
                    body=body.decode("utf-8", errors="replace"),
                    query=request.query_string,
                    headers=request.headers,  # type: ignore[arg-type]
                )
                answer = await self._app.async_dispatch(bolt_request)
            finally:
                self._seen.end(signature)
        return web.Response(
            status=answer.status,
            body=answer.body.encode(),
            headers=answer.first_headers_without_set_cookie(),
        )
