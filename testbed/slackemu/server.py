"""`SlackEmulator`: a local Slack (Web API, response_urls, Socket Mode) on 127.0.0.1, port 0.

It records every request, validates every message the bot sends against `bot.slack.limits`,
and can inject failures. It imports nothing from the bot but `bot.slack.limits`, and never
listens beyond the loopback interface.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from aiohttp import web

from bot.slack.limits import check_message, check_view
from testbed.slackemu.controls import EmulatorControls
from testbed.slackemu.files import UPLOAD_PATH, Files
from testbed.slackemu.home import views_publish
from testbed.slackemu.hooks import HookRegistry
from testbed.slackemu.methods import MESSAGE_METHODS, METHODS, error
from testbed.slackemu.ratelimits import RateLimits
from testbed.slackemu.records import (
    ApiCall,
    Fault,
    HookPost,
    Violation,
)
from testbed.slackemu.socket import SocketHub
from testbed.slackemu.wire import BadRequestBodyError, read_params, take_token
from testbed.slackemu.workspace import Workspace

DEFAULT_BOT_TOKEN = "xoxb-emulator-bot-token"
DEFAULT_APP_TOKEN = "xapp-emulator-app-token"
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
VIEW_METHODS = {"views.publish": views_publish}  # the App Home (testbed.slackemu.home)
HOST = "127.0.0.1"


class SlackEmulator(EmulatorControls):
    """A local Slack workspace that a Bolt app talks to as if it were slack.com.

    Use `async with SlackEmulator() as slack:` (or `start()` / `stop()`), point the bot's
    `AsyncWebClient(base_url=slack.api_url)` at it, and read what happened from `calls`,
    `violations`, `responses(hook_id)` and the channel views.
    """

    def __init__(
        self,
        *,
        bot_token: str = DEFAULT_BOT_TOKEN,
        app_token: str = DEFAULT_APP_TOKEN,
        team_id: str = "T0EMULATOR",
        bot_user_id: str = "U0KAIBOT",
        bot_id: str = "B0KAIBOT",
        app_id: str = "A0EMULATOR",
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rate_limits: bool | Mapping[str, int] = True,
    ) -> None:
        workspace = Workspace(
            team_id=team_id,
            bot_user_id=bot_user_id,
            bot_id=bot_id,
            app_id=app_id,
            wall_clock=wall_clock,
        )
        super().__init__(workspace)
        self.bot_token = bot_token
        self.app_token = app_token
        self.calls: list[ApiCall] = []
        self.violations: list[Violation] = []
        self.socket = SocketHub(app_id=app_id, changes=self._changes, clock=clock)
        self.files = Files()  # shared files, by ID (`testbed.slackemu.files`)
        self._file_methods = {
            "files.getUploadURLExternal": self.files.get_upload_url,
            "files.completeUploadExternal": self.files.complete,
        }
        self._hooks = HookRegistry(workspace)
        # Called with every recorded call, as it is recorded (a test notes who held a Lease).
        self.observers: list[Callable[[ApiCall], None]] = []
        self._clock = clock
        # Slack's tiers (`testbed.slackemu.ratelimits`), on unless a test turns them off; a
        # mapping sets some methods' calls per minute.
        allowance = rate_limits if isinstance(rate_limits, Mapping) else {}
        self.rate_limits = RateLimits(clock, allowance) if rate_limits is not False else None
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    async def __aenter__(self) -> SlackEmulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Serve on 127.0.0.1 on a free port (see `url`). Side effect: opens a socket."""
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_post("/hooks/{hook_id}", self._handle_hook)
        app.router.add_post(UPLOAD_PATH + "{file_id}", self._handle_upload)
        app.router.add_get("/socket", self.socket.handle)
        # A client that gives up must not cancel the handler: a call held on the wire is still
        # carried out when let go, as Slack would (testbed.slackemu.holding).
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=1,
            handler_cancellation=False,
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, HOST, 0).start()
        self._port = int(self._runner.addresses[0][1])
        self.files.base_url = self.url

    async def stop(self) -> None:
        """Close Socket Mode connections and stop serving; safe to call twice."""
        if self._runner is None:
            return
        await self.socket.close()
        await self._runner.cleanup()
        self._runner = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (no trailing slash).

        Raises:
            RuntimeError: the emulator is not started.
        """
        if self._port is None:
            raise RuntimeError("SlackEmulator is not started; call start() first")
        return f"http://{HOST}:{self._port}"

    @property
    def api_url(self) -> str:
        """The Web API base URL for `AsyncWebClient(base_url=...)`, with its trailing slash."""
        return f"{self.url}/api/"

    def new_response_url(
        self, *, channel_id: str | None = None, message_ts: str | None = None
    ) -> str:
        """A fresh response_url (`http://127.0.0.1:PORT/hooks/<id>`), good for five posts.

        With `channel_id`, an `in_channel` reply is also stored in that channel; with
        `message_ts`, a `replace_original` reply edits that message.
        """
        hook_id = self._hooks.create(channel_id=channel_id, message_ts=message_ts)
        return f"{self.url}/hooks/{hook_id}"

    @staticmethod
    def hook_id_of(response_url: str) -> str:
        """The hook id at the end of a response_url from `new_response_url`."""
        return response_url.rstrip("/").rsplit("/", 1)[-1]

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        fault = self._take_fault(method)
        body_error: str | None = None
        try:
            params = await read_params(request)
        except BadRequestBodyError as exc:
            params, body_error = {}, str(exc)
        token = take_token(request, params)
        retry_after = self._over_limit(method, params, token, fault)
        if retry_after is not None:
            return self._refuse(request, method, params, token, retry_after)
        hold = await self._hold(method, params, fault)
        served = None if fault is not None and fault.applies_call else fault
        status, answer, headers = self._answer(method, params, token, served, body_error)
        if fault is None:
            headers = {"x-oauth-scopes": ",".join(sorted(self.workspace.scopes)), **headers}
        if fault is not None and fault.mode in ("drop_before", "drop_after"):
            status = 0  # no answer: the connection is closed
        at = self._clock()
        call = ApiCall(
            method, params, token, request.method, at, status, answer, fault is not None, hold
        )
        self._record_call(call)
        return await self._respond(
            request, fault, web.json_response(answer, status=status or 200, headers=headers)
        )

    def _over_limit(
        self, method: str, params: dict[str, Any], token: str | None, fault: Fault | None
    ) -> int | None:
        """`Retry-After` for a call above its tier (a test's own fault comes first; a call
        that does not authenticate is refused for that, as no app's budget can be charged)."""
        if fault is not None or self.rate_limits is None:
            return None
        if self._check_token(method, token) is not None:
            return None
        return self.rate_limits.admit(method, params)

    def _refuse(
        self,
        request: web.Request,
        method: str,
        params: dict[str, Any],
        token: str | None,
        retry_after: int,
    ) -> web.Response:
        """A 429 as Slack sends it: `ratelimited`, `Retry-After`, nothing carried out."""
        answer = error("ratelimited")
        call = ApiCall(method, params, token, request.method, self._clock(), 429, answer)
        self._record_call(call)
        headers = {"Retry-After": str(retry_after)}
        return web.json_response(answer, status=429, headers=headers)

    async def _respond(
        self, request: web.Request, fault: Fault | None, answer: web.Response
    ) -> web.Response:
        """The answer, or what the fault does instead of answering it."""
        if fault is None or fault.mode == "answer":
            return answer
        if fault.mode in ("drop_before", "drop_after") and request.transport is not None:
            request.transport.abort()
        elif fault.mode == "delay_after":
            await asyncio.sleep(fault.delay)
        elif fault.mode == "applied_error":
            return web.json_response(fault.body(), status=fault.status, headers=fault.headers())
        return answer

    def _answer(
        self,
        method: str,
        params: dict[str, Any],
        token: str | None,
        fault: Fault | None,
        body_error: str | None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """HTTP status, JSON body and headers, checked in Slack's order."""
        if fault is not None:
            return fault.status, fault.body(), fault.headers()
        if body_error is not None:
            return 200, error("invalid_json", detail=body_error), {}
        known = METHODS.keys() | APP_TOKEN_METHODS | VIEW_METHODS.keys() | self._file_methods.keys()
        if method not in known:
            return 200, error("unknown_method"), {}
        auth_error = self._check_token(method, token)
        if auth_error is not None:
            return 200, error(auth_error), {}
        if method in MESSAGE_METHODS:
            problems = self._validate(method, params)
            if problems:
                return 200, error("invalid_blocks", errors=problems), {}
        if method == "apps.connections.open":
            return 200, self._open_connection(), {}
        if method in VIEW_METHODS:
            return 200, self._publish_view(method, params), {}
        if method in self._file_methods:
            return 200, self._file_methods[method](self.workspace, params), {}
        return 200, METHODS[method](self.workspace, params), {}

    def _check_token(self, method: str, token: str | None) -> str | None:
        if not token:
            return "not_authed"
        if token not in (self.bot_token, self.app_token):
            return "invalid_auth"
        wants_app_token = method in APP_TOKEN_METHODS
        return None if (token == self.app_token) == wants_app_token else "not_allowed_token_type"

    def _open_connection(self) -> dict[str, Any]:
        ticket = self.socket.issue_ticket()
        return {"ok": True, "url": f"ws://{HOST}:{self._port}/socket?ticket={ticket}"}

    def _publish_view(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A view Slack would refuse is recorded as a violation and answered as Slack does."""
        view = params.get("view")
        problems = check_view(view) if view is not None else []
        if problems:
            self.violations.append(Violation(method, tuple(problems), params, self._clock()))
            return error("invalid_arguments", response_metadata={"messages": problems})
        return VIEW_METHODS[method](self.workspace, params)

    def _validate(self, source: str, payload: dict[str, Any]) -> list[str]:
        problems = check_message(payload)
        if problems:
            self.violations.append(Violation(source, tuple(problems), payload, self._clock()))
        return problems

    async def _handle_upload(self, request: web.Request) -> web.Response:
        """A file's bytes POSTed to its upload URL: raw, or the file of a multipart form."""
        form_file = None
        if request.content_type.startswith("multipart/"):
            fields = await request.post()
            uploaded = [v for v in fields.values() if isinstance(v, web.FileField)]
            form_file = uploaded[0].file.read() if uploaded else b""
        body = b"" if form_file is not None else await request.read()
        status, text = self.files.receive(request.match_info["file_id"], body, form_file)
        self._changes.notify()
        return web.Response(status=status, text=text)

    async def _handle_hook(self, request: web.Request) -> web.Response:
        hook_id = request.match_info["hook_id"]
        try:
            body = json.loads(await request.text() or "{}")
        except json.JSONDecodeError:
            body = None
        status, text = self._answer_hook(hook_id, body)
        recorded = body if isinstance(body, dict) else {}
        peer = request.transport.get_extra_info("peername") if request.transport else None
        connection = f"{peer[0]}:{peer[1]}" if peer else ""
        self._hooks.record(HookPost(hook_id, recorded, self._clock(), status, connection))
        self._changes.notify()
        return web.Response(status=status, text=text)

    def _answer_hook(self, hook_id: str, body: Any) -> tuple[int, str]:
        fault = self._take_fault("response_url")
        if fault is not None:
            return fault.status, fault.error
        if not isinstance(body, dict):
            return 400, "invalid_payload"
        answer = self._hooks.answer(hook_id, body)
        if answer.problems:
            self.violations.append(Violation("response_url", answer.problems, body, self._clock()))
        return answer.status, answer.text

    def _record_call(self, call: ApiCall) -> None:
        self.calls.append(call)
        for observe in self.observers:
            observe(call)
        self._changes.notify()
