"""Alert use-cases: one check of a cluster, and the on-call commands, carried out in Slack.

Reads through `usecases.read_snapshot` (a constant number of API requests), decides with the
pure state machine (`bot.alerts.machine`), saves the new state *before* posting (the intent
to post a root) and the root's `ts` right after, so a restart or another replica continues the same
thread. Effects run in order through `bot.alerts.delivery` (which retries, logs and counts Slack
failures): nothing raises into the scheduler. One lock per cluster serialises checks and
commands within this process; the store's versions serialise them across replicas.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.alerts import machine as alerts
from bot.alerts import rules
from bot.alerts.delivery import SLACK_BACKOFFS, AlertMessages, MessageSender, Sleep
from bot.alerts.machine import EditRoot, Effect, Outcome, PostReply, PostRoot
from bot.alerts.model import AlertKey, AlertState, ClusterAlerts, Phase
from bot.alerts.store import AlertStore, StoreConflict, StoreUnavailable
from bot.config.settings import Settings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.health import report as health
from bot.health import usecase as usecases
from bot.kube.ports import KubeReader

log = logging.getLogger(__name__)

STORE_WARNING_EVERY = timedelta(hours=1)
SAVE_TRIES = 5  # a step redone after StoreConflict, at most this many times
Step = Callable[[ClusterAlerts], Outcome]


class AlertDesk:
    """The alert use-cases over one store and one Slack gateway; shared by jobs and listeners."""

    def __init__(
        self,
        settings: Settings,
        store: AlertStore,
        slack: MessageSender | None,
        metrics: Metrics,
        *,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = SLACK_BACKOFFS,
    ) -> None:
        self.settings = settings
        self.store = store
        self._metrics = metrics
        self._messages = AlertMessages(slack, metrics, sleep=sleep, backoffs=backoffs)
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._unsaved_roots: dict[AlertKey, tuple[str, str]] = {}
        self._store_warned: dict[str, datetime] = {}

    @property
    def policy(self) -> alerts.Policy:
        a = self.settings.alerts
        return alerts.Policy(
            a.hold, a.repeat, a.failures_before_alert, self.settings.slack.alert_channel
        )

    async def run_check(
        self, kube: KubeReader, now: datetime, *, still_leader: Callable[[], bool] = lambda: True
    ) -> None:
        """One check of `kube.cluster`: read, decide, save, post. Never raises for Kubernetes,
        Slack or store trouble (each is logged and counted).

        `still_leader` is asked again once the (possibly slow) read is done: a replica that lost
        the Lease meanwhile must leave the posting to the new holder.
        """
        cluster = kube.cluster
        step = await self._check_step(kube, now)  # reading needs no lock: commands go on
        if not still_leader():
            log.info("alerts of cluster %s: no longer the Lease holder; not posting", cluster)
            return
        async with self._locks[cluster]:
            try:
                outcome = await self._apply(cluster, step)
            except StoreUnavailable as e:
                log.error("alerts of cluster %s: cannot use the state store: %s", cluster, e)
                await self._warn_store_unavailable(cluster, e, now)
                return
            self._count_alerts(outcome.state)
            await self._carry_out(cluster, outcome.effects)

    async def _warn_store_unavailable(self, cluster: str, error: Exception, now: datetime) -> None:
        """Without its state the desk cannot avoid duplicate posts, so it posts no alert: it
        says so in the alert channel instead (never a silent gap)."""
        text = (
            f":warning: kai-chatops cannot keep its alert state for cluster {cluster}, so it "
            f"posts no alerts for it until this is fixed: {error}"
        )
        await self.warn_hourly(f"store:{cluster}", text, now)

    async def warn_hourly(self, key: str, text: str, now: datetime) -> None:
        """Post `text` in the alert channel, at most once an hour per `key`."""
        last = self._store_warned.get(key)
        if last is not None and now - last < STORE_WARNING_EVERY:
            return
        self._store_warned[key] = now
        await self._messages.post_notice(self.settings.slack.alert_channel, text)

    async def acknowledge(
        self, alert_id: str, user: str, now: datetime, *, cluster: str | None = None
    ) -> AlertState:
        """`user` acknowledges the alert; the thread and the root say so.

        Raises:
            UserError: no such active alert, or already acknowledged; StoreUnavailable.
        """
        return await self._command(
            cluster, alert_id, lambda s: alerts.acknowledge(s, alert_id, user, now)
        )

    async def silence(
        self,
        alert_id: str,
        user: str,
        duration: timedelta,
        reason: str,
        now: datetime,
        *,
        cluster: str | None = None,
    ) -> AlertState:
        """`user` silences the alert for `duration`; the thread and the root say so.

        Raises:
            UserError: no such active alert; StoreUnavailable.
        """
        return await self._command(
            cluster, alert_id, lambda s: alerts.silence(s, alert_id, user, duration, reason, now)
        )

    async def unsilence(
        self, alert_id: str, user: str, now: datetime, *, cluster: str | None = None
    ) -> AlertState:
        """`user` ends the alert's silence early.

        Raises:
            UserError: no such active alert, or not silenced; StoreUnavailable.
        """
        return await self._command(
            cluster, alert_id, lambda s: alerts.unsilence(s, alert_id, user, now)
        )

    async def list_alerts(self, cluster: str | None = None) -> list[ClusterAlerts]:
        """The stored state of one cluster, or of every configured cluster.

        Raises:
            StoreUnavailable.
        """
        names = [cluster] if cluster else [c.name for c in self.settings.clusters]
        return [(await self.store.load(name)).state for name in names]

    async def find(self, alert_id: str, cluster: str | None = None) -> AlertState:
        """The alert with that ID (active or pending), on `cluster` or on any cluster.

        Raises:
            UserError: no alert has that ID; StoreUnavailable.
        """
        for state in await self.list_alerts(cluster):
            found = state.find(alert_id)
            if found is not None:
                return found
        raise errors.UserError(f"No active alert {alert_id!r}; `/kai alerts` lists them.")

    async def _check_step(self, kube: KubeReader, now: datetime) -> Step:
        cluster, policy = kube.cluster, self.policy
        try:
            snapshot = await usecases.read_snapshot(
                kube, self.settings.kai.namespace, self.settings.keda.apiservice
            )
        except errors.KubeError as e:
            self._metrics.alert_checks.labels(cluster, "failed").inc()
            log.warning("alert check of cluster %s failed: %s", cluster, e)
            error = e

            def failed(state: ClusterAlerts) -> Outcome:
                seen = rules.cannot_check(cluster, error, state.failures + 1)
                return alerts.check_failed(state, seen, now, policy)

            return failed
        self._metrics.alert_checks.labels(cluster, "ok").inc()
        self._metrics.last_check.labels(cluster).set(now.timestamp())
        report = health.build_report(
            snapshot,
            cluster=cluster,
            now=now,
            progressing_timeout=self.settings.kai.progressing_timeout,
            apiservice_name=self.settings.keda.apiservice,
        )
        seen = rules.detect(
            snapshot,
            report,
            now=now,
            progressing_timeout=self.settings.kai.progressing_timeout,
            apiservice_name=self.settings.keda.apiservice,
        )
        return lambda state: alerts.observe(state, seen, now, policy)

    async def _command(self, cluster: str | None, alert_id: str, step: Step) -> AlertState:
        if cluster is None:
            cluster = (await self.find(alert_id)).key.cluster
        else:
            self.settings.cluster(cluster)  # an unknown cluster is the user's mistake
        async with self._locks[cluster]:
            outcome = await self._apply(cluster, step)
            await self._carry_out(cluster, outcome.effects)
        found = outcome.state.find(alert_id)
        if found is None:  # the steps above keep the alert they act on; this is a bug
            raise errors.UserError(f"Alert {alert_id} vanished while it was being changed.")
        return found

    async def _apply(self, cluster: str, step: Step) -> Outcome:
        """Load, step, save (only when something changed); redo the step on a conflict.

        Raises:
            StoreUnavailable: the store failed, or kept conflicting.
            UserError: the step refused (a command on an unknown alert, say).
        """
        for _ in range(SAVE_TRIES):
            stored = await self.store.load(cluster)
            state = self._with_unsaved_roots(stored.state)
            outcome = step(state)
            try:
                if outcome.state != stored.state:
                    await self.store.save(outcome.state, stored.version)
            except StoreConflict:
                continue
            self._forget_saved_roots(outcome.state)
            return outcome
        raise StoreUnavailable(f"alert state of {cluster} kept changing under us; try again")

    def _with_unsaved_roots(self, state: ClusterAlerts) -> ClusterAlerts:
        for key, (channel, ts) in self._unsaved_roots.items():
            if key.cluster == state.cluster:
                state = alerts.root_posted(state, key, channel, ts)
        return state

    def _forget_saved_roots(self, state: ClusterAlerts) -> None:
        for key in [k for k in self._unsaved_roots if k.cluster == state.cluster]:
            self._unsaved_roots.pop(key)

    async def _carry_out(self, cluster: str, effects: Sequence[Effect]) -> None:
        """Each effect in order; a failed root post is undone so the next check tries again."""
        for effect in effects:
            if isinstance(effect, PostRoot):
                await self._post_root(cluster, effect.alert)
            elif isinstance(effect, PostReply):
                await self._messages.post_reply(effect.alert, effect.note)
            elif isinstance(effect, EditRoot):
                await self._messages.edit_root(effect.alert)

    async def _post_root(self, cluster: str, alert: AlertState) -> None:
        ts = await self._messages.post_root(alert)
        key, channel = alert.key, alert.root_channel
        try:
            if ts is None:
                await self._apply(cluster, lambda s: Outcome(alerts.root_failed(s, key)))
                return
            # Kept in memory until saved: if the save fails, the next step still knows the ts.
            self._unsaved_roots[key] = (channel, ts)
            await self._apply(cluster, lambda s: Outcome(alerts.root_posted(s, key, channel, ts)))
        except StoreUnavailable as e:
            log.error("alert %s: cannot record its root message: %s", alert.alert_id, e)

    def _count_alerts(self, state: ClusterAlerts) -> None:
        for phase in Phase:
            if phase is not Phase.RESOLVED:
                count = sum(1 for a in state.alerts.values() if a.phase is phase)
                self._metrics.alerts.labels(state.cluster, phase.value).set(count)
