"""Builds the Bolt AsyncApp over the service's Slack client: the deps middleware, one error handler,
and the ack of the slash command (`command_ack`), decided once as the command comes in.

Wiring only: no business rules. Listeners live in `handlers/`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

import handlers
from bot.service import signing
from bot.service.deps import Deps
from bot.slack import blocks
from bot.slack.responses import ResponseUrls
from bot.subcommands import acks

log = logging.getLogger(__name__)


def build_app(
    deps: Deps,
    *,
    client: AsyncWebClient,
    signing_secret: str,
    hooks: Sequence[str],
    responses: ResponseUrls,
    seen: signing.SeenRequests | None = None,
) -> AsyncApp:
    """The Bolt app with our listeners; the same app serves HTTP mode and Socket Mode.

    `hooks`: the prefixes a payload's response_url may have (`signing.allowed_hooks`); a
    payload naming any other is refused before a listener runs, so nothing is posted there.
    `seen` (HTTP mode): each request's claim in the shared memory of requests, which the work
    after the ack waits for (`context["first_time"]`), so a replay runs nothing.
    `responses`: the connection pool `respond` posts through (Bolt's own opens one per post).
    """
    # With `process_before_response` the ack is sent the moment the listener returns. Without
    # it, Bolt runs the listener in a task and looks for the ack every 10 ms (bolt-python
    # slack_bolt/listener/asyncio_runner.py, `while ack.response is None ... sleep(0.01)`),
    # which adds 0-10 ms to every ack and more under load. Bolt's lazy listeners would deep-copy
    # the request context (and so `Deps`), so listeners start their slow part with
    # `deps.inflight.spawn` instead (handlers/commands.py, handlers/replies.py).
    # Signatures are checked once, before Bolt sees a request (`endpoint.SlackEvents`: Bolt
    # never gets an unsigned HTTP request; Socket Mode requests carry no signature); the bot
    # runs no workflow functions, so it has no function tokens to attach. Both are work every
    # ack would pay for again. The name is given because without one Bolt takes its caller's
    # file name from `inspect.stack()` (slack_bolt/app/async_app.py, `name or
    # inspect.stack()[1].filename`), which reads the source of every frame: tens of
    # milliseconds of every start-up (bench/startup.py). It names Bolt's loggers.
    app = AsyncApp(
        name="kai-chatops",
        client=client,
        signing_secret=signing_secret,
        process_before_response=True,
        request_verification_enabled=False,
        attaching_function_token_enabled=False,
    )

    app.use(_RequestSetup(deps, hooks, seen, responses))
    app.error(report_unexpected_error)
    handlers.register(app, deps)
    return app


def command_ack(deps: Deps) -> Callable[[str], acks.Decided]:
    """The ack of `/kai TEXT` as it comes in (`bot.subcommands.acks`; "restarting" while the
    service drains); a text that does not parse is counted (`invalid`, `rejected`)."""
    name, gitops = deps.settings.slack.command, deps.settings.gitops

    def decide(text: str) -> acks.Decided:
        decided = acks.decide(text, name, gitops, draining=deps.inflight.draining)
        if decided.invalid:
            deps.metrics.commands.labels("invalid", "rejected").inc()
        return decided

    return decide


class _RequestSetup(AsyncMiddleware):
    """Before any listener: refuse a payload whose response_url is not Slack's, so nothing is
    ever posted there; give listeners `deps`, the request's shared replay claim and a pooled
    `respond`; in Socket Mode, ack the slash command as HTTP mode's endpoint does (`_ack`).
    One class, not four functions: Bolt builds every argument a function middleware might take
    on each request (slack_bolt/kwargs_injection/async_utils.py), and a class is handed the
    request as it is; each saving is paid back on every ack (bench/ack_latency.py)."""

    def __init__(
        self,
        deps: Deps,
        hooks: Sequence[str],
        seen: signing.SeenRequests | None,
        responses: ResponseUrls,
    ) -> None:
        self._deps, self._hooks, self._seen, self._responses = deps, hooks, seen, responses
        self._command, self._command_ack = deps.settings.slack.command, command_ack(deps)

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse | None:
        if signing.names_foreign_hook(req.body, self._hooks):
            return BoltResponse(status=400, body="")
        context = req.context
        context["deps"] = self._deps
        if self._seen is not None:
            signatures = req.headers.get("x-slack-signature") or []
            context["first_time"] = self._seen.claim_of(signatures[0] if signatures else None)
        if context.response_url:
            context["respond"] = self._responses.respond_to(context.response_url)
        if req.body.get("command") == self._command and acks.PARSED not in context:
            return await self._ack(req, next)
        return await next()

    async def _ack(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse | None:
        """Socket Mode's slash command (HTTP mode's endpoint has decided its ack already and
        handed on what it parsed): bad input and help are answered here, in the ack; the rest
        goes on to the listener, parsed."""
        decided = self._command_ack(str(req.body.get("text") or ""))
        if decided.answer is not None:
            return await AsyncAck()(**decided.answer)  # type: ignore[no-untyped-call]
        req.context[acks.PARSED] = decided.parsed
        return await next()


async def report_unexpected_error(
    error: Exception, body: dict[str, Any], respond: AsyncRespond | None
) -> None:
    """The one global error path: log with the traceback, tell the user briefly, change nothing."""
    log.error("unhandled error for %s", body.get("command") or body.get("type"), exc_info=error)
    if respond is not None and body.get("response_url"):
        await respond(**blocks.text_message(blocks.GENERIC_FAILURE), response_type="ephemeral")
