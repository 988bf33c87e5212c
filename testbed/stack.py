"""The whole service on loopback, against the API simulator and the Slack emulator.

Used by `kai-chatops demo`, the end-to-end tests and the benchmarks, so all three exercise the
same real protocols: signed HTTP or Socket Mode from the emulator to the service, and HTTP from
the official Kubernetes client to the simulator. `running_service` is the Slack half alone, for
any kubeconfig: the cluster tier runs the same service against a real kube-apiserver.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from bot.alerts.drain import SLACK_BACKOFFS
from bot.config import settings as config
from bot.config.settings import Settings
from bot.integrations.pagerduty.events import PagerDutyEnv
from bot.keda.usecase import AckWait
from bot.service.deps import SlackEnv, build_deps, utc_now
from bot.service.server import Service
from bot.slack.client import SLACK_TIMEOUT
from testbed.sim import Simulator, kai_scheduler
from testbed.slackemu import Delivery, SlackDriver, SlackEmulator

CLUSTER = "sim"
ALERT_CHANNEL = "C0ALERTS"
DEMO_CHANNEL = "C0DEMO"
OPERATOR = "U0OPERATOR"
VIEWER = "U0VIEWER"
# The bearer token the service expects of Alertmanager's webhook (`ALERTMANAGER_TOKEN`) when a test
# configures `alertmanager`; harmless otherwise.
ALERTMANAGER_TOKEN = "test-alertmanager-token"


def demo_config(kubeconfig: str, context: str = "sim") -> dict[str, Any]:
    """The configuration the stack runs with, as it would be written in YAML."""
    return {
        "clusters": [{"name": CLUSTER, "kubeconfig": kubeconfig, "context": context}],
        "slack": {"command": "/kai", "alert_channel": ALERT_CHANNEL},
        # OPERATOR is an operator only through the user group, so every change in a test or
        # the demo goes through group resolution (usergroups.list, usergroups.users.list).
        "access": {"operators": ["@platform-oncall"], "viewers": "everyone"},
        "kai": {"namespace": "kai-scheduler"},
        "keda": {"namespaces": ["annia"]},
        "gitops": {
            "kai": {"kind": "helmrelease", "name": "flux-system/kai-scheduler"},
            "keda": {"kind": "helmrelease", "name": "flux-system/keda"},
        },
        "kubernetes": {"request_timeout": "5s", "retries": 2},
    }


@dataclass(frozen=True)
class Reply:
    """What the user saw: the ack, and the message posted to the response_url (if any)."""

    delivery: Delivery
    message: Mapping[str, Any] | None

    @property
    def text(self) -> str:
        """The reply's fallback text, or the ack's text when the ack was the whole answer."""
        if self.message is not None:
            return str(self.message.get("text", ""))
        return self.delivery.ack_text


@dataclass
class ServiceStack:
    """A running emulator and service, plus a driver playing the Slack user."""

    slack: SlackEmulator
    driver: SlackDriver
    service: Service
    kubeconfig: str
    settings: Settings
    make_service: Callable[[], Service]

    async def command(
        self,
        text: str,
        *,
        user_id: str = OPERATOR,
        channel_id: str = DEMO_CHANNEL,
        to_the_end: bool = False,
    ) -> Reply:
        """Type `/kai TEXT` (the configured `slack.command`) as `user_id`; wait for the ack, and
        for the reply if one follows.

        With `to_the_end`, a "reconciling…" progress reply is followed to the message that
        replaces it in place.
        """
        delivery = await self.driver.send_command(
            text, user_id=user_id, channel_id=channel_id, command=self.settings.slack.command
        )
        if not delivery.acked or delivery.ack_text:
            return Reply(delivery, None)
        post = await self.slack.wait_for_response(delivery.hook_id, timeout=30.0)
        reply = Reply(delivery, post.body)
        if to_the_end and reply.text.rstrip().endswith("…"):
            final = await self.slack.wait_for_response(delivery.hook_id, count=2, timeout=330.0)
            reply = Reply(delivery, final.body)
        return reply

    async def click(
        self,
        label: str,
        message: Mapping[str, Any],
        *,
        user_id: str = OPERATOR,
        channel_id: str = DEMO_CHANNEL,
        message_ts: str | None = None,
    ) -> Reply:
        """Click the button labelled `label` in `message`; wait for the ack and the reply."""
        action_id = find_button(message, label)
        delivery = await self.driver.click_button(
            action_id,
            user_id=user_id,
            channel_id=channel_id,
            message=message,
            message_ts=message_ts,
        )
        if not delivery.acked:
            return Reply(delivery, None)
        post = await self.slack.wait_for_response(delivery.hook_id, timeout=30.0)
        return Reply(delivery, post.body)

    async def restart_service(self) -> None:
        """Stop the service and start a new one (fresh memory) against the same cluster and
        Slack."""
        await self.service.stop()
        self.service = self.make_service()
        await self.service.start()
        self.driver.bot_url = f"http://127.0.0.1:{self.service.port}/slack/events"
        if self.service.env.socket_mode:
            await self.driver.wait_socket_connected(timeout=10.0)


@dataclass
class Stack(ServiceStack):
    """A running simulator, emulator and service, plus a driver playing the Slack user."""

    sim: Simulator = field(kw_only=True)


def find_button(message: Mapping[str, Any], label: str) -> str:
    """The action_id of the button labelled `label` (case-insensitive) in a Block Kit message."""
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            text = (
                str(element.get("text", {}).get("text", ""))
                if element.get("type") == "button"
                else ""
            )
            if text.lower() == label.lower():
                return str(element["action_id"])
    raise LookupError(f"no button labelled {label!r} in that message")


def add_demo_people(slack: SlackEmulator) -> None:
    """The workspace `demo_config` expects: OPERATOR an operator only through
    `@platform-oncall`, VIEWER a viewer who is in `@platform-leads` (alerts escalate to it)."""
    slack.add_user(OPERATOR, "oncall-operator")
    slack.add_user(VIEWER, "curious-viewer")
    slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR])
    slack.add_usergroup("S0LEADS", "platform-leads", [VIEWER])


@asynccontextmanager
async def running_stack(
    workdir: Path,
    *,
    scenarios: Sequence[str] = ("default",),
    socket_mode: bool = False,
    config_overrides: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] = utc_now,
    monotonic: Callable[[], float] = time.monotonic,
    slack_timeout: float = SLACK_TIMEOUT,
    slack_backoffs: Sequence[float] = SLACK_BACKOFFS,
    keda_controller: bool = False,
    keda_wait: AckWait | None = None,
    first_checks_after: timedelta | None = None,
    kai_release: str | None = None,
    sim_clock: Callable[[], datetime] = utc_now,
    pagerduty: PagerDutyEnv | None = None,
    live_scheduler: bool = False,
) -> AsyncIterator[Stack]:
    """Start the simulator, the emulator and the service on 127.0.0.1; stop them all afterwards.

    `clock` is the service's idea of now (confirmation expiry, timed pauses, alerts) and the
    emulated Slack's (message ts), so tests can move time forward without waiting; `monotonic`
    times the Lease. `slack_timeout` is the service's Slack client timeout (tests of answers
    that come too late make it short), `slack_backoffs` the waits between tries of an alert
    message (tests of outages make them zero). The simulator runs its Flux and Argo CD
    controllers, and with `keda_controller` also a KEDA one that answers pause annotations;
    `keda_wait` is how long a pause or resume waits for KEDA's answer (short where no KEDA
    runs). The service's own alert checks begin `first_checks_after` its start: by default
    after one `alerts.interval`, so a test drives the checks of the first interval itself and
    counts the requests a command makes alone; `timedelta(0)` is the service's own timing.
    `kai_release` is the KAI release the simulated cluster runs (`testbed.sim.kai_releases`),
    `sim_clock` the simulator's idea of now (the times it stamps on what it stores).
    `pagerduty`: PAGERDUTY_* for a stack configured with `pagerduty` (a stand-in's URL,
    `testbed.pagerduty`); its events are tried again after `slack_backoffs` too.
    `live_scheduler`: the simulated KAI scheduler touches what waits as a live one does (the
    demo: a person watches it for longer than the stall alert's wait).
    """
    simulator = Simulator(
        scenarios=scenarios,
        controllers=not keda_controller,
        kai_release=kai_release,
        clock=sim_clock,
    )
    async with simulator as sim, _cycling(sim, live_scheduler):
        if keda_controller:
            sim.start_controllers(keda=True)
        kubeconfig = sim.write_kubeconfig(str(workdir / "kubeconfig"))
        async with running_service(
            workdir,
            kubeconfig,
            socket_mode=socket_mode,
            config_overrides=config_overrides,
            clock=clock,
            monotonic=monotonic,
            slack_timeout=slack_timeout,
            slack_backoffs=slack_backoffs,
            keda_wait=keda_wait,
            first_checks_after=first_checks_after,
            pagerduty=pagerduty,
            extend=lambda served: Stack(
                **{f.name: getattr(served, f.name) for f in fields(ServiceStack)}, sim=sim
            ),
        ) as stack:
            yield stack


@asynccontextmanager
async def _cycling(sim: Simulator, live: bool) -> AsyncIterator[None]:
    """With `live`, the simulated KAI scheduler runs meanwhile (`kai_scheduler.run_live`)."""
    if not live:
        yield
        return
    task = asyncio.get_running_loop().create_task(kai_scheduler.run_live(sim))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


S = TypeVar("S", bound=ServiceStack)


def _as_is(stack: ServiceStack) -> ServiceStack:
    return stack


@asynccontextmanager
async def running_service(
    workdir: Path,
    kubeconfig: str,
    *,
    context: str = "sim",
    socket_mode: bool = False,
    config_overrides: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] = utc_now,
    monotonic: Callable[[], float] = time.monotonic,
    slack_timeout: float = SLACK_TIMEOUT,
    slack_backoffs: Sequence[float] = SLACK_BACKOFFS,
    keda_wait: AckWait | None = None,
    first_checks_after: timedelta | None = None,
    pagerduty: PagerDutyEnv | None = None,
    extend: Callable[[ServiceStack], S] = _as_is,  # type: ignore[assignment]
) -> AsyncIterator[S]:
    """Start the emulator and the service (configured by `demo_config` for the cluster of
    `kubeconfig`); stop both afterwards. The arguments are `running_stack`'s; `extend` makes
    the object yielded (a `Stack` adds the simulator), and the service stopped at the end is
    that object's, whatever `restart_service` made it."""
    secret = secrets.token_hex(16)
    async with SlackEmulator(wall_clock=lambda: clock().timestamp()) as slack:
        add_demo_people(slack)
        state = {"state": {"path": str(workdir / "kai-chatops-state.sqlite")}}
        raw = {**demo_config(kubeconfig, context), **state, **(config_overrides or {})}
        settings = config.parse_settings(raw)
        env = SlackEnv(
            bot_token=slack.bot_token,
            signing_secret=secret,
            app_token=slack.app_token if socket_mode else None,
            api_url=slack.api_url,
            alertmanager_token=ALERTMANAGER_TOKEN,
        )

        def make_service() -> Service:
            deps = build_deps(
                settings,
                env,
                clock=clock,
                monotonic=monotonic,
                slack_timeout=slack_timeout,
                slack_backoffs=slack_backoffs,
                keda_wait=keda_wait,
                pagerduty=pagerduty,
                pager_backoffs=slack_backoffs,
            )
            first = settings.alerts.interval if first_checks_after is None else first_checks_after
            return Service(deps, env, host="127.0.0.1", port=0, first_checks_after=first)

        service = make_service()
        await service.start()
        bot_url = f"http://127.0.0.1:{service.port}/slack/events"
        driver = SlackDriver(slack, bot_url=bot_url, signing_secret=secret)
        stack = extend(ServiceStack(slack, driver, service, kubeconfig, settings, make_service))
        try:
            if socket_mode:
                await driver.wait_socket_connected(timeout=10.0)
            yield stack
        finally:
            await driver.aclose()
            await stack.service.stop()
