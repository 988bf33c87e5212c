"""Runs the service: the Slack listener (HTTP or Socket Mode) and `/healthz` `/readyz` `/metrics`.

Composition only. HTTP mode serves `POST /slack/events` (signature-verified before Bolt sees it)
on the same port as the three GET endpoints, through a listener that bounds each request's header
section and the connections open at once (`bot.service.listener`); Socket Mode connects out with
the app token instead.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.service import app, listener, probes, schedule, signing, webhook
from bot.service.deps import Deps, SlackEnv
from bot.service.endpoint import SLACK_PATH, SlackEvents
from bot.slack.responses import ResponseUrls

if TYPE_CHECKING:
    from bot.service.socket_mode import SocketModeHandler

log = logging.getLogger(__name__)

# Well inside the Deployment's terminationGracePeriodSeconds (30 s).
DRAIN_SECONDS = 20.0


class Service:
    """The running service; `start()` then `stop()`, or `run_until_signalled()`."""

    def __init__(
        self,
        deps: Deps,
        env: SlackEnv,
        *,
        host: str = "0.0.0.0",
        port: int = 3000,
        extra_jobs: Sequence[schedule.Job] = (),
        first_checks_after: timedelta = timedelta(0),
    ):
        self.deps, self.env = deps, env
        self._host, self._port = host, port
        self._client = deps.slack.client
        self.schedule = schedule.build_scheduler(self.deps, extra_jobs, first_checks_after)
        # HTTP mode: requests are signed, so replays are caught (Socket Mode has no signature).
        self._seen = None if env.socket_mode else signing.SeenRequests(self.deps.once)
        self._hooks = signing.allowed_hooks(env.api_url)
        self._responses = ResponseUrls()
        self.app = app.build_app(
            self.deps,
            client=self._client,
            signing_secret=env.signing_secret,
            hooks=self._hooks,
            responses=self._responses,
            seen=self._seen,
        )
        self._socket: SocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self.probes = probes.Probes(self.deps, self._client, self._socket_client)

    def _socket_client(self) -> Any | None:
        return self._socket.client if self._socket is not None else None

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        if self._listener is None or not self._listener.sockets:
            return self._port
        return int(self._listener.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Serve the endpoints, and in Socket Mode connect to Slack."""
        web_app = web.Application() if self.env.socket_mode else self._http_app()
        self.probes.add_routes(web_app)
        if self.deps.settings.alertmanager is not None:
            webhook.AlertmanagerWebhook(self.deps, self.env.alertmanager_token).add_routes(web_app)
        self.probes.watch.start()
        self._runner = listener.make_runner(web_app)
        await self._runner.setup()
        self._listener = await listener.listen(self._runner, self._host, self._port)
        if self.env.socket_mode:
            from bot.service.socket_mode import SocketModeHandler  # HTTP mode: never imported

            self._socket = SocketModeHandler(
                self.app, self.env.app_token, self._client, self.deps.inflight
            )
            self._socket.client.on_message_listeners.append(self.probes.link.on_message)
            await self._socket.connect_async()  # type: ignore[no-untyped-call]
        self.schedule.start()
        mode = "Socket Mode" if self.env.socket_mode else "HTTP mode on POST /slack/events"
        log.info("kai-chatops serving: %s, port %d", mode, self.port)

    def _http_app(self) -> web.Application:
        """`POST /slack/events`: signature, replays, the ack, Bolt (`endpoint.SlackEvents`)."""
        assert self._seen is not None  # HTTP mode: requests are signed
        web_app = web.Application()
        events = SlackEvents(
            self.app,
            self.env.signing_secret,
            self._seen,
            self.deps.inflight,
            command=self.deps.settings.slack.command,
            command_ack=app.command_ack(self.deps),
            hooks=self._hooks,
            responses=self._responses,
        )
        web_app.router.add_post(SLACK_PATH, events.handle)
        return web_app

    async def stop(self, drain_for: float = DRAIN_SECONDS) -> None:
        """Drain, then stop the jobs, give up the Lease, stop serving, release the clusters'
        connections and the alert store.

        Draining: readiness fails and new commands are turned away ("restarting"), the Socket
        Mode connection closes so Slack sends to another replica, and work in flight gets up to
        `drain_for` seconds to post its replies.
        """
        self.deps.inflight.draining = True
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
            self._socket = None
        if not await self.deps.inflight.wait_idle(drain_for):
            log.warning("stopping with %d replies still in flight", self.deps.inflight.count)
            await self.deps.inflight.cancel_running()
        await self.probes.watch.stop()
        await self.schedule.stop()
        await self.deps.alerts.close()
        if self.deps.lease is not None:  # None: no Lease is configured
            await self.deps.lease.release(self.deps.clock())
        if self._listener is not None:
            self._listener.close()  # no new connections; those open are aiohttp's to end
        if self._runner is not None:
            await self._runner.cleanup()
        if self._listener is not None:
            await self._listener.wait_closed()
        await self._responses.close()
        self.deps.close()

    async def run_until_signalled(self) -> None:
        """Run until SIGTERM or SIGINT, then stop cleanly."""
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopping.set)
        await self.start()
        # Everything built at start-up (modules, clients, Bolt) lives as long as the process:
        # taking it out of the cyclic collector's scans turns full collections of ~50 ms into a
        # few ms, and a full collection stops every ack in flight (bench/ack_latency.py). A young
        # generation of 10 000 objects instead of 700 collects once per burst of commands rather
        # than every other ack: what one ack allocates is mostly freed by reference counting.
        # `kai-chatops serve` starts with the collector off (bot/cli.py): the garbage of
        # start-up (a few thousand objects) is frozen with the rest rather than looked for by
        # a full collection, which would hold up readiness.
        gc.freeze()
        gc.set_threshold(10_000)
        gc.enable()
        await stopping.wait()
        log.info("kai-chatops stopping")
        await self.stop()
