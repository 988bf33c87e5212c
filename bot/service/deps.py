"""Everything a listener or job needs, built whole once by `build_deps` and passed explicitly."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from bot.access import approval_store, confirmations, grouped, journal
from bot.access.approval_store import ApprovalStore
from bot.access.gate import Gate
from bot.access.journal import ChangeJournal
from bot.access.once import OnceStore
from bot.alerts import store as alert_store
from bot.alerts.drain import SLACK_BACKOFFS, Poster
from bot.alerts.lease import LeaderLease, default_identity
from bot.alerts.store import AlertStore
from bot.alerts.usecase import AlertDesk
from bot.changes import registry
from bot.changes.pipeline import ChangePipeline
from bot.config.settings import Settings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.core.models import HealthReport
from bot.integrations.alertmanager_api import AlertmanagerSilences
from bot.integrations.pagerduty import delivery as pd_delivery
from bot.integrations.pagerduty.client import EventsClient
from bot.integrations.pagerduty.events import PagerDutyEnv
from bot.keda.usecase import AckWait
from bot.kube import gateway as kube_gateway
from bot.kube.ports import KubeWriter
from bot.service.inflight import InFlight
from bot.service.singleflight import SingleFlight
from bot.slack import client as slack_client
from bot.slack.gateway import SlackGateway
from bot.timeline.usecase import TimelineReader


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SlackEnv:
    """Slack credentials and endpoint, and the bearer token Alertmanager's webhook presents
    (`ALERTMANAGER_TOKEN`), only ever from the environment (docs/design.md §1.2)."""

    bot_token: str
    signing_secret: str
    app_token: str | None
    api_url: str | None
    alertmanager_token: str = ""

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
        api_url = env.get("SLACK_API_URL") or None
        return cls(token, secret, app_token, api_url, env.get("ALERTMANAGER_TOKEN", ""))

    def check_integrations(self, settings: Settings) -> None:
        """The tokens the configured integrations need are set.

        Raises:
            ConfigError: one line per missing token.
        """
        if settings.alertmanager is not None and not self.alertmanager_token.strip():
            raise errors.ConfigError(
                [
                    "ALERTMANAGER_TOKEN: missing; alertmanager is configured, and its webhook "
                    "(POST /alertmanager) needs the bearer token Alertmanager presents"
                ]
            )


@dataclass(frozen=True)
class Deps:
    """The service's collaborators, every one there from the start (`build_deps`):

    - `settings`; `kube`, one Kubernetes gateway per cluster (`kube_for`); `metrics`;
    - `slack`, the Slack gateway (its `client` is the Bolt app's too); `confirm_key`, which
      signs Confirm buttons (derived from the bot token);
    - the state `state.backend` names: `once` (used requests and Confirms), `alert_store`,
      `journal` (the last changes, for the Home tab), on the first cluster when shared;
    - `alerts`, the alert desk; `lease`, the Lease of `lease` in the config, None when it is
      off (one replica, which runs the checks);
    - `clock` (the service's now; tests move it) and `monotonic` (timing that must survive
      clock steps); `health_checks` (one health check per cluster at a time); `inflight`
      (the work a shutdown waits for); `approvals`, the changes waiting for a second
      operator (`access.approval`), beside `once`;
    - `changes`, the change pipeline every write goes through (`bot.changes`), whose KEDA
      changes wait `keda_wait` for KEDA's answer.
    """

    settings: Settings
    kube: Mapping[str, KubeWriter]
    metrics: Metrics
    slack: SlackGateway
    confirm_key: bytes
    once: OnceStore
    alert_store: AlertStore
    alerts: AlertDesk
    lease: LeaderLease | None
    journal: ChangeJournal
    clock: Callable[[], datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    health_checks: SingleFlight[str, HealthReport] = field(default_factory=SingleFlight)
    inflight: InFlight = field(default_factory=InFlight)
    approvals: ApprovalStore | None = None  # always set by `build_deps`
    keda_wait: AckWait = field(default_factory=AckWait)

    @property
    def gate(self) -> Gate:
        """Who may look and who may change things (`access`), asking Slack for user groups."""
        return Gate(self.settings.access, self.slack)

    @cached_property
    def timeline(self) -> TimelineReader:
        """What changed on a cluster (`/kai timeline`; the alert desk has its own)."""
        return TimelineReader(self.settings, self.journal, self.alert_store, self.clock)

    @cached_property
    def changes(self) -> ChangePipeline:
        """The change pipeline (ask, claim once, approval, as the person, the record), with its
        own memory of the objects a request is under way for."""
        return ChangePipeline(self, registry.change_kinds(keda_wait=self.keda_wait))

    def kube_for(self, cluster: str | None) -> KubeWriter:
        """The gateway for `--cluster NAME`, or the first configured cluster.

        Raises:
            UserError: no cluster of that name is configured.
        """
        return self.kube[self.settings.cluster(cluster).name]

    def close(self) -> None:
        """Release what `build_deps` opened: the clusters' connections and the state."""
        for gateway in self.kube.values():
            close = getattr(gateway, "close", None)  # a gateway, not every `KubeWriter`
            if close is not None:
                close()
        self.alert_store.close()
        self.journal.close()
        self.once.close()
        if self.approvals is not None:
            self.approvals.close()


def build_deps(
    settings: Settings,
    env: SlackEnv,
    *,
    clock: Callable[[], datetime] = utc_now,
    monotonic: Callable[[], float] = time.monotonic,
    slack_timeout: float = slack_client.SLACK_TIMEOUT,
    slack_backoffs: Sequence[float] = SLACK_BACKOFFS,
    keda_wait: AckWait | None = None,
    pagerduty: PagerDutyEnv | None = None,
    pager_backoffs: Sequence[float] = pd_delivery.BACKOFFS,
) -> Deps:
    """Connect to every configured cluster and Slack, open the state, and bundle it all.

    The test bed passes its clocks, a short Slack timeout, no backoffs between tries of an
    alert message, and a short wait for KEDA (its cluster may run no KEDA); the service takes
    the defaults.

    `pagerduty`: PAGERDUTY_* of the environment, needed with `pagerduty` configured.

    Raises:
        ConfigError: the state or the Lease cannot be used as configured; `pagerduty`
            configured without its environment.
    """
    env.check_integrations(settings)
    metrics = Metrics()
    kube = kube_gateway.connect_all(settings.clusters, settings.kubernetes, metrics)
    home = kube[settings.clusters[0].name]  # where the Lease and the shared state live
    client = slack_client.build_client(env.bot_token, env.api_url, metrics, timeout=slack_timeout)
    slack = SlackGateway(client, monotonic=time.monotonic)
    store = alert_store.open_store(settings, home, metrics, clock)
    lease = _lease(settings, home, monotonic)
    metrics.check_interval.set(settings.alerts.interval.total_seconds())
    metrics.follow_lease(
        lambda: lease is None or lease.is_leader(),
        lambda: 0 if lease is None else lease.transitions,
    )
    poster = Poster(
        lease.identity if lease is not None else default_identity(),
        is_holder=lambda: lease is None or lease.is_leader(),
        clock=clock,
        acting_left=lambda: None if lease is None else lease.acting_left(),
        term=lambda: 0 if lease is None else lease.terms,
        monotonic=monotonic,
        landing_bound=slack_timeout,
        # After a takeover, an uncertain call or a closing, the channel is converged while a
        # late call may still land: a Lease's duration (a deposed holder's calls) plus the
        # Slack timeout of the last one.
        settle=(lease.duration if lease else timedelta(0)) + timedelta(seconds=slack_timeout),
    )
    once = grouped.open_once(settings, home)
    changes = journal.open_journal(settings, home)
    # Every alert thread's second reply: what changed in the hour before it fired.
    timeline = TimelineReader(settings, changes, store, clock)
    silences = (
        None if settings.alertmanager is None else AlertmanagerSilences(settings.alertmanager.url)
    )
    pager = _pager(settings, pagerduty, (store, poster, slack, metrics), pager_backoffs)
    desk = AlertDesk(
        settings,
        store,
        slack,
        metrics,
        poster=poster,
        backoffs=slack_backoffs,
        silences=silences,
        pager=pager,
        changes=timeline,
    )
    return Deps(
        settings,
        kube,
        metrics,
        slack,
        confirm_key=confirmations.derive_key(env.bot_token),
        once=once,
        alert_store=store,
        alerts=desk,
        lease=lease,
        journal=changes,
        clock=clock,
        monotonic=monotonic,
        approvals=approval_store.open_store(settings, home),
        keda_wait=keda_wait or AckWait(),
    )


def _pager(
    settings: Settings,
    env: PagerDutyEnv | None,
    parts: tuple[AlertStore, Poster, SlackGateway, Metrics],
    backoffs: Sequence[float],
) -> pd_delivery.PagerDutyDelivery | None:
    """PagerDuty's delivery with `pagerduty` configured, else None.

    Raises:
        ConfigError: `pagerduty` configured without PAGERDUTY_ROUTING_KEY.
    """
    if settings.pagerduty is None:
        return None
    env = env or PagerDutyEnv.from_environ({})  # raises: the key is missing
    store, poster, slack, metrics = parts
    return pd_delivery.PagerDutyDelivery(
        store,
        EventsClient(env.enqueue_url),
        env.routing_key,
        poster,
        channel=settings.slack.alert_channel,
        workspace_url=pd_delivery.WorkspaceUrl(slack.client.auth_test),
        metrics=metrics,
        backoffs=backoffs,
    )


def _lease(
    settings: Settings, kube: KubeWriter, monotonic: Callable[[], float]
) -> LeaderLease | None:
    """The Lease of `lease` in the config, or None when it is off (`auto`: on exactly when the
    alert state is the shared ConfigMap, i.e. when several replicas can share it).

    Raises:
        ConfigError: the first cluster's gateway cannot write objects.
    """
    enabled = settings.lease.enabled
    if enabled is None:
        enabled = settings.state.backend == "configmap"
    if not enabled:
        return None
    return LeaderLease(kube, settings.lease, monotonic=monotonic)
