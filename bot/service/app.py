"""Builds the Bolt AsyncApp: the Slack client, the deps middleware, the one error handler.

Wiring only: no business rules. Listeners live in `handlers/`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

import handlers
from bot.service import signing
from bot.service.deps import Deps
from bot.slack import blocks as render

log = logging.getLogger(__name__)

SLACK_API_URL = "https://slack.com/api/"
SLACK_TIMEOUT = 30  # seconds for one Web API call (slack_sdk's default)


def build_client(
    bot_token: str, api_url: str | None, *, timeout: float = SLACK_TIMEOUT
) -> AsyncWebClient:
    """The Slack Web API client; 429s are retried after `Retry-After`, never dropped.

    Only 429s: slack_sdk's default connection-error handler re-sends a call after a dropped
    connection, which for `chat.postMessage` posts the message twice when the first one landed.
    Writes are retried by their callers, which know whether a retry is safe.
    """
    base_url = api_url or SLACK_API_URL
    client = AsyncWebClient(
        token=bot_token,
        base_url=base_url.rstrip("/") + "/",
        timeout=timeout,  # type: ignore[arg-type]
    )
    client.retry_handlers = [AsyncRateLimitErrorRetryHandler(max_retry_count=5)]
    return client


def build_app(
    deps: Deps,
    *,
    client: AsyncWebClient,
    signing_secret: str,
    hooks: Sequence[str],
    seen: signing.SeenRequests | None = None,
) -> AsyncApp:
    """The Bolt app with our listeners; the same app serves HTTP mode and Socket Mode.

    `hooks`: the prefixes a payload's response_url may have (`signing.allowed_hooks`); a
    payload naming any other is refused before a listener runs, so nothing is posted there.
    `seen` (HTTP mode): each request's claim in the shared memory of requests, which the work
    after the ack waits for (`context["first_time"]`), so a replay runs nothing.
    """
    # With `process_before_response` the ack is sent the moment the listener returns. Without
    # it, Bolt runs the listener in a task and looks for the ack every 10 ms (bolt-python
    # slack_bolt/listener/asyncio_runner.py, `while ack.response is None ... sleep(0.01)`),
    # which adds 0-10 ms to every ack and more under load. Bolt's lazy listeners would deep-copy
    # the request context (and so `Deps`), so listeners start their slow part with
    # `deps.inflight.spawn` instead (handlers/commands.py, handlers/replies.py).
    app = AsyncApp(client=client, signing_secret=signing_secret, process_before_response=True)

    async def refuse_foreign_hooks(body: dict[str, Any], next: Any) -> BoltResponse | None:
        foreign = [u for u in signing.response_urls(body) if not signing.is_allowed_hook(u, hooks)]
        if foreign:
            log.warning("refused a Slack payload whose response_url is not Slack's")
            return BoltResponse(status=400, body="")
        await next()
        return None

    async def inject_deps(req: AsyncBoltRequest, context: dict[str, Any], next: Any) -> None:
        context["deps"] = deps
        if seen is not None:
            signatures = req.headers.get("x-slack-signature") or []
            context["first_time"] = seen.claim_of(signatures[0] if signatures else None)
        await next()

    app.middleware(refuse_foreign_hooks)
    app.middleware(inject_deps)
    app.error(report_unexpected_error)
    handlers.register(app, deps)
    return app


async def report_unexpected_error(
    error: Exception, body: dict[str, Any], respond: AsyncRespond | None
) -> None:
    """The one global error path: log with the traceback, tell the user briefly, change nothing."""
    log.error("unhandled error for %s", body.get("command") or body.get("type"), exc_info=error)
    if respond is not None and body.get("response_url"):
        await respond(**render.text_message(render.GENERIC_FAILURE), response_type="ephemeral")
