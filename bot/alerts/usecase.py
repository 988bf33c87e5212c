"""The alerts' use-case, `AlertDesk`: what the jobs and listeners ask of the alerts, over one
store and one Slack gateway. Each concern is a module of its own over one shared
`usecase_context.DeskContext`: the check (`usecase_check`), fleet regrouping (`usecase_fleet`),
the evidence replies (`usecase_evidence`: the diagnosis, what changed before), trouble notices
(`usecase_trouble`), reminders of forgotten changes (`usecase_reminders`) and the on-call
commands (`usecase_commands`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from bot.alerts import machine, usecase_reminders
from bot.alerts.courier import Couriers
from bot.alerts.delivery import MessageSender
from bot.alerts.drain import SLACK_BACKOFFS, Poster
from bot.alerts.model import ALERTMANAGER, AlertState, ClusterAlerts
from bot.alerts.pages import PageSender
from bot.alerts.store import AlertStore
from bot.alerts.usecase_check import Check
from bot.alerts.usecase_commands import OnCallCommands
from bot.alerts.usecase_context import DeskContext
from bot.alerts.usecase_evidence import ChangesReport, Evidence
from bot.alerts.usecase_external import ExternalIncidents, ExternalSilences, KubeOf
from bot.alerts.usecase_fleet import FleetIncidents
from bot.alerts.usecase_trouble import TroubleNotices, Words
from bot.config.settings import Settings
from bot.core.metrics import Metrics
from bot.core.models import Sleep
from bot.kube.ports import KubeReader, PodLogReader
from bot.rules.held import HeldObject, KindScope


class AlertDesk:
    """The alert use-cases over one store and one Slack gateway; shared by jobs and listeners.

    Saves what it owes Slack in the alerts' outboxes *before* anything is sent; the drain
    (`bot.alerts.drain`) then delivers it, exactly once, and only on the Lease holder.
    """

    def __init__(
        self,
        settings: Settings,
        store: AlertStore,
        slack: MessageSender | None,
        metrics: Metrics,
        *,
        poster: Poster | None = None,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = SLACK_BACKOFFS,
        changes: ChangesReport | None = None,
        silences: ExternalSilences | None = None,
        pager: PageSender | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        context = DeskContext.open(
            settings,
            store,
            slack,
            metrics,
            poster=poster,
            sleep=sleep,
            backoffs=backoffs,
            pager=pager,
        )
        self._context = context
        self._troubles = TroubleNotices(context)
        evidence = Evidence(context, changes)
        self._check = Check(context, FleetIncidents(context, evidence), evidence, self._troubles)
        self._couriers = Couriers()
        self._commands = OnCallCommands(context, self._couriers)
        self.alertmanager = ExternalIncidents(context, evidence, ALERTMANAGER)
        self._silences = silences

    @property
    def policy(self) -> machine.Policy:
        """The state machine's timers and channel, from `alerts` and `slack.alert_channel`."""
        return self._context.policy

    async def run_check(
        self,
        kube: PodLogReader,
        now: datetime,
        *,
        still_leader: Callable[[], bool] = lambda: True,
        reads: KubeReader | None = None,
        deliver_apart: bool = False,
    ) -> datetime | None:
        """One check of `kube.cluster` (`usecase_check`): read (through `reads` when given: a
        local copy kept current by watches), decide, save, post. Never raises for Kubernetes,
        Slack or store trouble (each is logged and counted). Returns when a hold it saw runs
        out (`due.next_look`), so a caller can check again then rather than an interval later.

        `still_leader` is asked again once the (possibly slow) read is done: a replica that lost
        the Lease meanwhile must leave the posting to the new holder. Each new incident's
        diagnosis is gathered after its root went out, then posted as its first reply.
        With `deliver_apart` (the scheduled checks) the sending is left to the cluster's
        courier (`bot.alerts.courier`): the check returns once the state is saved, and no
        check waits for Slack.
        """
        couriers = self._couriers if deliver_apart else None
        return await self._check.run(kube, reads or kube, now, still_leader, couriers)

    def drain_apart(self, cluster: str) -> None:
        """`drain`, left to the cluster's courier: the caller (the Lease job, say) does not wait
        for Slack."""
        self._couriers.send(cluster, lambda: self.drain(cluster), kind="drain")

    async def deliveries_done(self) -> None:
        """Wait until the couriers have sent what the checks handed them."""
        await self._couriers.idle()

    async def close(self) -> None:
        """Stop the deliveries under way (the state keeps what they owe: sent at the next
        start, or by the next holder)."""
        await self._couriers.close()

    async def remind(
        self, cluster: str, held: Sequence[HeldObject], places: Sequence[KindScope], now: datetime
    ) -> datetime | None:
        """Reminders of the pauses and suspends without an end that a sweep saw held in
        `places` (`usecase_reminders`): saved with what they owe, then delivered (on the
        Lease holder); when the next one falls due. Nothing when `changes.remind_after` is 0.
        Never raises for store or Slack trouble (logged; the next sweep tries again)."""
        return await usecase_reminders.remind(self._context, cluster, held, places, now)

    async def drain(
        self,
        cluster: str,
        *,
        known: ClusterAlerts | None = None,
        fleet_known: ClusterAlerts | None = None,
    ) -> None:
        """Deliver what `cluster`'s alerts owe Slack (on the Lease holder only), and the fleet
        incidents' (`alerts.group_clusters`): every caller, at start-up, on becoming the holder
        and after a command, reaches them too. `known` and `fleet_known`: the states just saved
        (or found unchanged), which spare reading them again when they owe nothing. Never
        raises."""
        await self._context.deliver(cluster, known, fleet_known)

    async def take_in(self, step: machine.AlertStep, kube_of: KubeOf, now: datetime) -> None:
        """An Alertmanager notification's `step` of its groups' document, saved; its delivery
        (on the Lease holder, `usecase_external`) left to the document's courier: the webhook
        is answered once it is saved, never after Slack.

        Raises:
            StoreUnavailable: nothing was saved.
        """
        known = (await self.alertmanager.save(step)).state
        deliver = self.alertmanager.deliver
        self._couriers.send(ALERTMANAGER, lambda: deliver(known, kube_of, now), kind="webhook")

    async def note_trouble(
        self,
        key: str,
        now: datetime,
        *,
        error: str | None,
        warning: str,
        recovery: str,
        speaker: bool = True,
    ) -> None:
        """One more failure (`error`) or success (None) of `key`; says `warning` after a few
        failures in a row (again hourly), and `recovery` once it has worked for `alerts.hold`.
        Each is said once across replicas: it carries an ID that is looked for first; when the
        look cannot be made only the `speaker` (the last holder of the Lease) says it."""
        await self._troubles.note(key, now, error, Words(warning, recovery), speaker=speaker)

    async def acknowledge(
        self,
        alert_id: str,
        user: str,
        now: datetime,
        *,
        cluster: str | None = None,
        command_id: str = "",
    ) -> AlertState:
        """`user` acknowledges the alert; the thread and the root say so.

        Raises:
            UserError: no such active alert, or already acknowledged; StoreUnavailable.
        """
        command = self._context.command

        def act(i: str) -> machine.AlertStep:
            return lambda s: machine.acknowledge(s, i, user, now, command=command)

        return await self._commands.run(cluster, alert_id, act, command_id)

    async def silence(
        self,
        alert_id: str,
        user: str,
        duration: timedelta,
        reason: str,
        now: datetime,
        *,
        cluster: str | None = None,
        command_id: str = "",
    ) -> AlertState:
        """`user` silences the alert for `duration`; the thread and the root say so.

        Raises:
            UserError: no such active alert; StoreUnavailable.
        """
        command = self._context.command
        silence_id = ""
        external = await self._external(cluster, alert_id)
        if external is not None and self._silences is not None:
            until = now + duration
            silence_id = await self._silences.silence(external, user, until, reason, now)

        def act(i: str) -> machine.AlertStep:
            return lambda s: machine.silence(
                s, i, user, duration, reason, now, command=command, silence_id=silence_id
            )

        return await self._commands.run(cluster, alert_id, act, command_id)

    async def _external(self, cluster: str | None, alert_id: str) -> AlertState | None:
        """The active incident of an outside source (Alertmanager) that `alert_id` names, or
        None for the bot's own alerts.

        Raises:
            UserError: it names no active incident; StoreUnavailable.
        """
        document, alert_id = await self._commands.target(cluster, alert_id)
        if document != ALERTMANAGER:
            return None
        state = (await self.store.load(document)).state
        return machine.find_active(state, alert_id, command=self._context.command)

    async def unsilence(
        self,
        alert_id: str,
        user: str,
        now: datetime,
        *,
        cluster: str | None = None,
        command_id: str = "",
    ) -> AlertState:
        """`user` ends the alert's silence early.

        Raises:
            UserError: no such active alert, or not silenced; StoreUnavailable.
        """
        command = self._context.command
        external = await self._external(cluster, alert_id)
        if external is not None and external.silence_id and self._silences is not None:
            await self._silences.expire(external.silence_id)

        def act(i: str) -> machine.AlertStep:
            return lambda s: machine.unsilence(s, i, user, now, command=command)

        return await self._commands.run(cluster, alert_id, act, command_id)

    async def list_alerts(self, cluster: str | None = None) -> list[ClusterAlerts]:
        """The stored state of one cluster, or of every configured cluster (`usecase_commands`).

        Raises:
            UserError: no cluster of that name is configured; StoreUnavailable.
        """
        return await self._commands.list_alerts(cluster)

    async def find(self, alert_id: str, cluster: str | None = None) -> AlertState:
        """The alert with that ID (active or pending), on `cluster` or on any cluster.

        Raises:
            UserError: no alert has that ID; StoreUnavailable.
        """
        return await self._commands.find(alert_id, cluster)
