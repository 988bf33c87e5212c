"""Runs the service: the Slack listener (HTTP or Socket Mode) and `/healthz` `/readyz` `/metrics`.

Composition only. HTTP mode serves `POST /slack/events` (signature-verified before Bolt sees it)
on the same port as the three GET endpoints; Socket Mode connects out with the app token instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

import handlers
from bot.access import confirmations, grouped
from bot.access import journal as change_journal
from bot.alerts import desk
from bot.alerts import store as alert_store
from bot.alerts.drain import SLACK_BACKOFFS, Poster
from bot.alerts.lease import LeaderLease, default_identity
from bot.core import errors
from bot.core.metrics import Metrics
from bot.kube.ports import KubeWriter
from bot.service import app as bot_app
from bot.service import probes, schedule, signing
from bot.service.deps import Deps
from bot.service.endpoint import SLACK_PATH, SlackEvents
from bot.service.inflight import InFlight
from bot.slack.gateway import SlackGateway
from bot.slack.responses import ResponseUrls

log = logging.getLogger(__name__)

# Well inside the Deployment's terminationGracePeriodSeconds (30 s).
DRAIN_SECONDS = 20.0


@dataclass(frozen=True)
class SlackEnv:
    """Slack credentials and endpoint, only ever from the environment (docs/design.md §1.2)."""

    bot_token: str
    signing_secret: str
    app_token: str | None
    api_url: str | None

    @property
    def socket_mode(self) -> bool:
        return bool(self.app_token)

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> SlackEnv:
        """Read SLACK_* variables; every missing or malformed one is reported at once.

        Raises:
            ConfigError: one line per problem.
        """
        token, secret = env.get("SLACK_BOT_TOKEN", ""), env.get("SLACK_SIGNING_SECRET", "")
        app_token = env.get("SLACK_APP_TOKEN") or None
        problems = []
        if not token.startswith("xoxb-"):
            problems.append("SLACK_BOT_TOKEN: missing or not a bot token (expected xoxb-...)")
        if app_token is not None and not app_token.startswith("xapp-"):
            problems.append("SLACK_APP_TOKEN: not an app-level token (expected xapp-...)")
        if app_token is None and not secret:
            problems.append(
                "SLACK_SIGNING_SECRET: missing; HTTP mode needs it to verify requests "
                "(or set SLACK_APP_TOKEN for Socket Mode)"
            )
        if problems:
            raise errors.ConfigError(problems)
        return cls(token, secret, app_token, env.get("SLACK_API_URL") or None)


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
        slack_timeout: float = bot_app.SLACK_TIMEOUT,
        slack_backoffs: Sequence[float] = SLACK_BACKOFFS,
    ):
        self.env = env
        self._host, self._port = host, port
        self._client = bot_app.build_client(env.bot_token, env.api_url, timeout=slack_timeout)
        self._client.retry_handlers.insert(0, _RateLimitCounter(deps.metrics))
        slack = SlackGateway(self._client, monotonic=time.monotonic)
        store = deps.alert_store
        if store is None:
            store = alert_store.open_store(deps.settings, _state_cluster(deps))
        lease = deps.lease if deps.lease is not None else _lease(deps)
        poster = Poster(
            lease.identity if lease is not None else default_identity(),
            is_holder=lambda: lease is None or lease.is_leader(),
            clock=deps.clock,
        )
        self.deps = dataclasses.replace(
            deps,
            slack=slack,
            confirm_key=confirmations.derive_key(env.bot_token),
            once=grouped.open_once(deps.settings, _state_cluster(deps)),
            alert_store=store,
            alerts=desk.AlertDesk(
                deps.settings, store, slack, deps.metrics, poster=poster, backoffs=slack_backoffs
            ),
            lease=lease,
            journal=deps.journal
            or change_journal.open_journal(deps.settings, _state_cluster(deps)),
        )
        self.schedule = schedule.build_scheduler(self.deps, extra_jobs)
        # HTTP mode: requests are signed, so replays are caught (Socket Mode has no signature).
        self._seen = None if env.socket_mode else signing.SeenRequests(self.deps.once)
        self._hooks = signing.allowed_hooks(env.api_url)
        self._responses = ResponseUrls()
        self.app = bot_app.build_app(
            self.deps,
            client=self._client,
            signing_secret=env.signing_secret,
            hooks=self._hooks,
            responses=self._responses,
            seen=self._seen,
        )
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self.probes = probes.Probes(self.deps, self._client, self._socket_client)

    def _socket_client(self) -> Any | None:
        return self._socket.client if self._socket is not None else None

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        if self._runner is None or not self._runner.addresses:
            return self._port
        return int(self._runner.addresses[0][1])

    async def start(self) -> None:
        """Serve the endpoints, and in Socket Mode connect to Slack."""
        web_app = web.Application() if self.env.socket_mode else self._http_app()
        self.probes.add_routes(web_app)
        self.probes.watch.start()
        self._runner = web.AppRunner(web_app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()
        if self.env.socket_mode:
            self._socket = _SocketModeHandler(
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
            command_ack=handlers.command_acks(self.deps),
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
        await self.probes.watch.stop()
        await self.schedule.stop()
        if self.deps.lease is not None:
            await self.deps.lease.release(self.deps.clock())
        if self._runner is not None:
            await self._runner.cleanup()
        await self._responses.close()
        for gateway in self.deps.kube.values():
            close = getattr(gateway, "close", None)
            if close is not None:
                close()
        if self.deps.alert_store is not None:
            self.deps.alert_store.close()
        if self.deps.journal is not None:
            self.deps.journal.close()
        self.deps.once.close()

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
        gc.freeze()
        gc.set_threshold(10_000)
        await stopping.wait()
        log.info("kai-chatops stopping")
        await self.stop()


class _SocketModeHandler(AsyncSocketModeHandler):
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


def _state_cluster(deps: Deps) -> KubeWriter:
    """The gateway of the first cluster: where the Lease and the state ConfigMap live."""
    return deps.kube[deps.settings.clusters[0].name]


def _lease(deps: Deps) -> LeaderLease | None:
    """The Lease of `lease` in the config, or None when it is off (`auto`: on exactly when the
    alert state is the shared ConfigMap, i.e. when several replicas can share it).

    Raises:
        ConfigError: the first cluster's gateway cannot write objects.
    """
    settings = deps.settings
    enabled = settings.lease.enabled
    if enabled is None:
        enabled = settings.state.backend == "configmap"
    if not enabled:
        return None
    return LeaderLease(_state_cluster(deps), deps.settings.lease, monotonic=deps.monotonic)


class _RateLimitCounter(AsyncRetryHandler):
    """Counts every 429 from Slack (`kai_chatops_slack_sends{outcome="rate_limited"}`).

    Never retries itself: the rate-limit handler after it waits `Retry-After` and retries.
    """

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(max_retry_count=0)
        self._metrics = metrics

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and response.status_code == 429:
            self._metrics.slack_sends.labels("rate_limited").inc()
        return False
