"""`POST /slack/events` in HTTP mode: the signature, then replays, then the ack, then Bolt.

Bolt's own aiohttp adapter (bolt-python slack_bolt/adapter/aiohttp/__init__.py and
slack_bolt/app/async_server.py) would do the same conversions behind our checks as middleware;
one handler keeps an ack's path to what it needs. The request counts as being acked
(`InFlight.acking`) from its first byte read to its answer, so work after other acks waits.

A slash command's ack depends on its text alone ("restarting", a usage text, the help, or
nothing: `bot.subcommands.acks`), so it is sent before Bolt runs at all; when the ack is empty,
Bolt then runs the listener with the command as parsed here (`acks.PARSED`), after the burst of
acks it came in (`InFlight.spawn`), and whatever the listener would have acked is posted instead.
Everything else (clicks, events) is Bolt's to answer. Slack gives an app 3 seconds to ack; with
many commands at once, Bolt's dispatch would be most of each ack's time (bench/ack_latency.py).
A body that has not arrived within those 3 seconds could not be acked in time anyway: it is cut
off (408) before anything reads it, so a sender that never finishes holds nothing open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import unquote_plus

from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.commands.grammar import Command
from bot.service import signing
from bot.service.inflight import InFlight
from bot.slack import blocks
from bot.slack.blocks import Message
from bot.slack.responses import ResponseUrls
from bot.subcommands import acks

log = logging.getLogger(__name__)

SLACK_PATH = "/slack/events"
FORM = "application/x-www-form-urlencoded"
BODY_SECONDS = 3.0  # Slack's ack window: a body slower than this cannot be answered in time
# What Bolt raises reading a payload it cannot use: not JSON (ValueError), nested deeper than
# the parser goes (RecursionError), or JSON that is not an object (AttributeError, TypeError).
UNREADABLE = (ValueError, RecursionError, AttributeError, TypeError)
# What a command's ack reads of its form (`_ack_command`); Bolt parses the whole form after.
ACK_FIELDS = frozenset({"command", "ssl_check", "text", "response_url"})


class SlackEvents:
    """The handler of Slack's requests (commands, interactivity, events) to the bot."""

    def __init__(
        self,
        app: AsyncApp,
        secret: str,
        seen: signing.SeenRequests,
        inflight: InFlight,
        *,
        command: str,
        command_ack: Callable[[str], acks.Decided],
        hooks: Sequence[str],
        responses: ResponseUrls,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._app, self._secret, self._seen = app, secret, seen
        self._inflight, self._clock = inflight, clock
        self._command, self._command_ack = command, command_ack
        self._hooks, self._responses = hooks, responses

    async def handle(self, request: web.Request) -> web.Response:
        """401 for a request whose signature cannot be verified (nothing else happens); 200 and
        nothing run for a replay; else the ack."""
        with self._inflight.acking():
            body = await _body(request)
            if body is None:
                log.warning("cut off a request to %s: its body did not come in time", SLACK_PATH)
                return web.Response(status=408, headers={"Connection": "close"})
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
            text = body.decode("utf-8", errors="replace")
            bolt_request = _BoltRequest(text, request.query_string, request.headers)
            fields = self._our_command(text, request.content_type)
            if fields is None:
                try:
                    return await self._dispatch_other(bolt_request)
                finally:
                    self._seen.end(signature)
            return await self._ack_command(fields, bolt_request, signature)

    async def _dispatch_other(self, bolt_request: _BoltRequest) -> web.Response:
        """Bolt's answer to a click, an event, ...; 400 for a payload Bolt cannot read (not
        JSON, nested past the parser's depth, not an object): nothing runs."""
        try:
            built = bolt_request.build()
        except UNREADABLE as e:
            log.warning("refused a signed request whose payload cannot be read (%r)", e)
            return web.Response(status=400)
        return _http(await self._app.async_dispatch(built))

    def _our_command(self, text: str, content_type: str) -> dict[str, str] | None:
        """The fields of our slash command, or None for anything else."""
        if content_type != FORM or text.startswith("payload="):
            return None
        fields = form_fields(text, ACK_FIELDS)
        if fields.get("command") != self._command or "ssl_check" in fields:
            return None
        return fields

    async def _ack_command(
        self, fields: Mapping[str, str], bolt_request: _BoltRequest, signature: str
    ) -> web.Response:
        if signing.names_foreign_hook(fields, self._hooks):
            self._seen.end(signature)
            return web.Response(status=400)
        decided = self._command_ack(fields.get("text") or "")
        if decided.answer is not None:
            self._seen.end(signature)
            return _http(await AsyncAck()(**decided.answer))  # type: ignore[no-untyped-call]
        assert decided.parsed is not None  # an empty ack: the work of a parsed command follows
        response_url = fields.get("response_url", "")
        self._inflight.spawn(self._dispatch(bolt_request, signature, response_url, decided.parsed))
        return web.Response(status=200)

    async def _dispatch(
        self, bolt_request: _BoltRequest, signature: str, response_url: str, parsed: Command
    ) -> None:
        """Bolt runs the listener of a command whose (empty) ack has left, handing it the
        command as parsed (`acks.PARSED`); should it ack anything still, or fail, that goes to
        the response_url (Bolt's error handler has told the user of an error in a listener: 500)."""
        try:
            answer = await self._app.async_dispatch(bolt_request.build(**{acks.PARSED: parsed}))
        finally:
            self._seen.end(signature)
        respond = self._responses.respond_to(response_url)
        if answer.status == 200 and answer.body:
            await respond(_message(answer.body))
        elif answer.status not in (200, 500):
            log.error("Bolt answered %d to a command already acked", answer.status)
            await respond(**blocks.text_message(blocks.GENERIC_FAILURE), response_type="ephemeral")


def form_fields(text: str, wanted: frozenset[str]) -> dict[str, str]:
    """The `wanted` fields of a form body, each as `dict(parse_qsl(text, keep_blank_values=True))`
    has it (decoded as UTF-8, `+` a space, the last of a repeated field); the other fields are
    not decoded at all: decoding a command's dozen fields was a quarter of its ack's time."""
    fields = {}
    for pair in text.split("&"):
        name, _, value = pair.partition("=")
        if "%" in name or "+" in name:
            name = unquote_plus(name)
        if name in wanted:
            fields[name] = unquote_plus(value)
    return fields


async def _body(request: web.Request) -> bytes | None:
    """The request's body, or None when it has not come in within BODY_SECONDS. A body already
    in whole (a command's fits in one packet) is read at once: no timer and no task of its own,
    which with 50 commands at once would be a tenth of the burst's acks' time."""
    if request.content.is_eof():
        return await request.read()
    try:
        return await asyncio.wait_for(request.read(), BODY_SECONDS)
    except TimeoutError:
        return None


class _BoltRequest:
    """What Bolt's request is made of (the headers copied: they outlive the aiohttp request),
    made into one only when Bolt is to run."""

    def __init__(self, body: str, query: str, headers: Mapping[str, str]) -> None:
        self._body, self._query, self._headers = body, query, dict(headers)

    def build(self, **context: object) -> AsyncBoltRequest:
        headers: dict[str, str | Sequence[str]] = dict(self._headers)
        return AsyncBoltRequest(
            body=self._body, query=self._query, headers=headers, context=context
        )


def _message(body: str) -> Message:
    """An ack's body as a message: Bolt acks plain text as text, anything richer as JSON."""
    if body.startswith("{"):
        parsed: Message = json.loads(body)
        return parsed
    return {"text": body}


def _http(answer: BoltResponse) -> web.Response:
    return web.Response(
        status=answer.status,
        body=answer.body.encode(),
        headers=answer.first_headers_without_set_cookie(),
    )
