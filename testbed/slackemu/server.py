"""`SlackEmulator`: a local Slack (Web API, response_urls, Socket Mode) on 127.0.0.1, port 0.

It records every request, validates every message the bot sends against `bot.slack.limits`,
and can inject failures. It imports nothing from the bot but `bot.slack.limits`, and never
listens beyond the loopback interface.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable, Iterable
from datetime import timedelta
from types import TracebackType
from typing import Any

from aiohttp import web

from bot.slack.limits import check_message, check_view
from testbed.slackemu.holding import CallMatch, Hold
from testbed.slackemu.home import views_publish
from testbed.slackemu.hooks import HookRegistry
from testbed.slackemu.methods import MESSAGE_METHODS, METHODS, error
from testbed.slackemu.records import (
    ApiCall,
    Fault,
    HookPost,
    PostedMessage,
    User,
    UserGroup,
    Violation,
)
from testbed.slackemu.socket import SocketHub
from testbed.slackemu.views import EmulatorViews
from testbed.slackemu.wire import BadRequestBodyError, read_params, take_token
from testbed.slackemu.workspace import Workspace

DEFAULT_BOT_TOKEN = "xoxb-emulator-bot-token"
DEFAULT_APP_TOKEN = "xapp-emulator-app-token"
APP_TOKEN_METHODS = frozenset({"apps.connections.open"})
VIEW_METHODS = {"views.publish": views_publish}  # the App Home (testbed.slackemu.home)
HOST = "127.0.0.1"


class SlackEmulator(EmulatorViews):
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
        self._hooks = HookRegistry(workspace)
        self._faults: dict[str, deque[Fault]] = {}
        # A test's random fault schedule: asked for every call no queued fault answers.
        self.fault_rule: Callable[[str], Fault | None] | None = None
        # Called with every recorded call, as it is recorded (a test notes who held a Lease).
        self.observers: list[Callable[[ApiCall], None]] = []
        self._holds: list[Hold] = []
        self._clock = clock
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
        app.router.add_get("/socket", self.socket.handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        await web.TCPSite(self._runner, HOST, 0).start()
        self._port = int(self._runner.addresses[0][1])

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

    def add_user(
        self,
        user_id: str,
        name: str,
        *,
        is_admin: bool = False,
        is_owner: bool = False,
        is_bot: bool = False,
        is_restricted: bool = False,
        deleted: bool = False,
        real_name: str = "",
        tz: str = "UTC",
    ) -> User:
        """Add (or replace) a member that `users.info` knows."""
        user = User(
            user_id, name, real_name, is_admin, is_owner, is_bot, is_restricted, deleted, tz
        )
        self.workspace.add_user(user)
        return user

    def add_usergroup(
        self, group_id: str, handle: str, members: Iterable[str], *, name: str = ""
    ) -> UserGroup:
        """Add (or replace) a user group; call again to change its members mid-test."""
        group = UserGroup(group_id, handle.removeprefix("@"), tuple(members), name)
        self.workspace.add_usergroup(group)
        return group

    @property
    def clock_offset(self) -> timedelta:
        """How far Slack's clock (message `ts`) is from the wall clock; settable at any time
        (`ts` still never goes back: set it before the messages it should stamp)."""
        return self.workspace.clock_offset

    @clock_offset.setter
    def clock_offset(self, offset: timedelta) -> None:
        self.workspace.clock_offset = offset

    def flood(
        self, channel: str, count: int, *, thread_ts: str | None = None, user: str = "U0NOISE"
    ) -> list[PostedMessage]:
        """`count` messages from a human `user` landing at once in `channel` (or in the thread
        of `thread_ts`): a busy channel. No API call is recorded; waiters are woken once.

        Raises:
            LookupError: `thread_ts` names no message in the channel.
        """
        posted = self.workspace.flood(channel, count, thread_ts=thread_ts, user=user)
        self._changes.notify()
        return posted

    def hold_calls(self, match: CallMatch) -> Hold:
        """Hold every call `match(method, params)` picks on the wire until `Hold.release()`;
        then Slack carries each out and answers, whether or not its client still waits
        (`testbed.slackemu.holding.metadata_by(params)` names a message's poster)."""
        hold = Hold(match)
        self._holds.append(hold)
        return hold

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int = 1,
        error: str = "ratelimited",
        times: int = 1,
        mode: str = "answer",
        delay: float = 0.0,
        gate: asyncio.Event | None = None,
    ) -> None:
        """Make the next `times` calls of `method` fail instead of being served.

        A 429 carries `Retry-After: retry_after`; any status answers `{"ok": false, "error"}`
        (use `status=200` for a plain Slack error such as `channel_not_found`). `mode` (see
        `Fault`) drops the connection before or after doing the call, answers late, or answers
        an error after doing it; `gate` holds a `delay_before` call until the test sets it.
        `method` may also be `"response_url"` to fail posts to hooks.
        Faulted calls are recorded.
        """
        queue = self._faults.setdefault(method, deque())
        queue.extend(Fault(status, retry_after, error, mode, delay, gate) for _ in range(times))

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
        if fault is not None and fault.mode == "delay_before":
            await _wait(fault)
        hold = self._hold_for(method, params) if fault is None else None
        if hold is not None:
            await self._wait_held(hold)
        served = None if fault is not None and fault.applies_call else fault
        status, answer, headers = self._answer(method, params, token, served, body_error)
        if fault is not None and fault.mode in ("drop_before", "drop_after"):
            status = 0  # no answer: the connection is closed
        call = ApiCall(
            method, params, token, request.method, self._clock(), status, answer, fault is not None
        )
        if hold is not None:
            hold.landed += 1
        self._record_call(call)
        return await self._respond(
            request, fault, web.json_response(answer, status=status or 200, headers=headers)
        )

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
        if method not in METHODS and method not in APP_TOKEN_METHODS | VIEW_METHODS.keys():
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

    def _hold_for(self, method: str, params: dict[str, Any]) -> Hold | None:
        return next((h for h in self._holds if h.is_holding and h.match(method, params)), None)

    async def _wait_held(self, hold: Hold) -> None:
        hold.held += 1
        self._changes.notify()
        await hold.gate.wait()

    def _take_fault(self, method: str) -> Fault | None:
        queue = self._faults.get(method)
        if queue:
            return queue.popleft()
        return self.fault_rule(method) if self.fault_rule is not None else None

    def _record_call(self, call: ApiCall) -> None:
        self.calls.append(call)
        for observe in self.observers:
            observe(call)
        self._changes.notify()


async def _wait(fault: Fault) -> None:
    """Hold a `delay_before` call: until its gate is set, or for its delay."""
    if fault.gate is not None:
        await fault.gate.wait()
    else:
        await asyncio.sleep(fault.delay)
