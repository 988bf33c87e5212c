"""`/healthz`, `/readyz` and `/metrics`, and what they watch: the loop and the link to Slack.

Liveness fails when the event loop stops turning or a Socket Mode connection has carried nothing
(not even pongs) for a minute; readiness fails until Slack and at least one cluster first answer,
and while the service drains on its way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import errors
from bot.service import liveness
from bot.service.deps import Deps

WATCHDOG_EVERY = 1.0
SLACK_RECHECK_EVERY = 60.0


class LoopWatch:
    """A task that ticks every second: if ticks stop, the loop is stuck."""

    def __init__(self) -> None:
        self.last_tick = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick(self) -> None:
        while True:
            self.last_tick = time.monotonic()
            await asyncio.sleep(WATCHDOG_EVERY)


class SlackLink:
    """When the Socket Mode connection last carried a message or a pong (wall clock)."""

    def __init__(self) -> None:
        self.started = time.time()
        self.last_message: float | None = None

    async def on_message(self, _: Any) -> None:
        self.last_message = time.time()

    def silent_for(self, socket_client: Any) -> float:
        pong = getattr(socket_client, "last_ping_pong_time", None)
        heard = max(t for t in (self.started, self.last_message, pong) if t is not None)
        return max(0.0, time.time() - heard)


class Probes:
    """The three GET endpoints of the service."""

    def __init__(
        self, deps: Deps, client: AsyncWebClient, socket_client: Callable[[], Any | None]
    ) -> None:
        self.deps = deps
        self.watch = LoopWatch()
        self.link = SlackLink()
        self.slack_silent_after = liveness.SLACK_SILENT_AFTER
        self._slack_ok_at: float | None = None
        self._was_ready = False
        self._client = client
        self._socket_client = socket_client

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/readyz", self.readyz)
        app.router.add_get("/metrics", self.metrics)

    async def healthz(self, _: web.Request) -> web.Response:
        signs = await self._signs()
        problems = liveness.problems(signs, slack_silent_after=self.slack_silent_after)
        if problems:
            return web.Response(status=503, text="\n".join(problems) + "\n")
        return web.Response(text="ok\n")

    async def _signs(self) -> liveness.Signs:
        socket = self._socket_client()
        connected = bool(socket is not None and await socket.is_connected())
        return liveness.Signs(
            loop_stuck_for=time.monotonic() - self.watch.last_tick,
            socket_mode=socket is not None,
            slack_connected=connected,
            slack_silent_for=self.link.silent_for(socket) if socket is not None else 0.0,
        )

    async def readyz(self, _: web.Request) -> web.Response:
        """Not ready until Slack and a cluster first answer, and while draining.

        Once ready it stays ready through a cluster or Slack outage: the replica must keep
        taking commands then (help, ack, silence, and saying the cluster is unreachable).
        """
        if self.deps.inflight.draining:
            problems = ["shutting down"]
        else:
            problems = [] if self._was_ready else await self._unready()
        if problems:
            return web.Response(status=503, text="\n".join(problems) + "\n")
        self._was_ready = True
        return web.Response(text="ready\n")

    async def _unready(self) -> list[str]:
        """Why the service cannot serve yet: Slack unusable, or not one cluster reachable."""
        problems = []
        try:
            await self._check_slack()
        except Exception as e:  # whatever failed, Slack is not usable yet
            problems.append(f"slack: {type(e).__name__}: {e}")
        reachable = 0
        for name, gateway in self.deps.kube.items():
            try:
                await gateway.server_version()
                reachable += 1
                break  # one is enough: a fleet's other clusters need not hold readiness back
            except errors.KubeError as e:
                problems.append(f"cluster {name}: {e}")
        return problems if problems and (problems[0].startswith("slack") or not reachable) else []

    async def _check_slack(self) -> None:
        """`auth.test`, at most once a minute once it has passed (probes come every 10 s)."""
        now = time.monotonic()
        if self._slack_ok_at is not None and now - self._slack_ok_at < SLACK_RECHECK_EVERY:
            return
        await self._client.auth_test()
        self._slack_ok_at = now

    async def metrics(self, _: web.Request) -> web.Response:
        body = self.deps.metrics.render()
        return web.Response(body=body, content_type="text/plain", charset="utf-8")
