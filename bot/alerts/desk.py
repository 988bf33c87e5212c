"""Alert use-cases: one check of a cluster, and the on-call commands, carried out in Slack.

Reads through `usecases.read_snapshot` (a constant number of API requests), decides with the
pure state machine (`bot.alerts.machine`), and saves the new state with everything it owes
Slack in the alerts' outboxes *before* anything is sent; then the drain (`bot.alerts.drain`)
delivers it, exactly once, and only on the Lease holder. A damaged state document is kept
aside and said in the channel, and alerting goes on from empty state. A store that keeps
failing is said once (and its recovery too, `bot.alerts.trouble`). Nothing raises into the
scheduler. One lock per cluster serialises checks and commands within this process; the
store's versions serialise them across replicas.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.alerts import due, fleet, outbox, queue_checks, reminders, rules, trouble, verdicts
from bot.alerts import machine as alerts
from bot.alerts import render as render_alerts
from bot.alerts.delivery import AlertMessages, Attempt, MessageSender, Paging
from bot.alerts.delivery import Outcome as Sent
from bot.alerts.drain import SLACK_BACKOFFS, Drain, Poster, Sleep
from bot.alerts.lease import default_identity
from bot.alerts.model import (
    FLEET,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Observation,
    Owed,
    Phase,
)
from bot.alerts.store import AlertStore, Damage, StoreUnavailable, update
from bot.config.settings import Settings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.core.models import ClusterSnapshot
from bot.diagnostics import cause as causes
from bot.diagnostics import render as render_diagnosis
from bot.diagnostics import subjects
from bot.diagnostics import usecase as diagnostics
from bot.health import report as health
from bot.health import usecase as usecases
from bot.kube.ports import KubeReader, PodLogReader
from bot.rules.held import HeldObject, Place
from bot.slack.blocks import Block, Message, escape

log = logging.getLogger(__name__)

TROUBLE_REPEAT = timedelta(hours=1)
NOTICE_LOOK_BACK_HOURS = 2  # a trouble notice is looked for this far back on Slack's clock
Step = Callable[[ClusterAlerts], alerts.Outcome]


def _with_evidence(
    incident: str, effect_id: str, text: str, blocks: list[Block]
) -> Callable[[ClusterAlerts], tuple[ClusterAlerts, ClusterAlerts]]:
    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, ClusterAlerts]:
        changed = outbox.gathered(state, incident, effect_id, text, blocks)
        return changed, changed

    return change


def _is_next(state: ClusterAlerts, incident: str, effect_id: str) -> bool:
    """Whether `effect_id` heads its incident's outbox (its root is already in Slack)."""
    head = outbox.head(state, incident)
    return head is not None and head.effect_id == effect_id


def _hours_before(ts: str, hours: int) -> str:
    """A Slack ts `hours` before `ts` (Slack's clock, not ours); "" when `ts` is unknown."""
    seconds, _, micros = ts.partition(".")
    if not seconds.isdigit():
        return ""
    return f"{max(0, int(seconds) - hours * 3600)}.{micros or '000000'}"


def repair_damaged(state: ClusterAlerts, damage: Damage) -> ClusterAlerts:
    """Empty state owing one loud notice about the damaged document (once per damaged text)."""
    digest = hashlib.sha256(damage.text.encode()).hexdigest()[:12]
    text = render_alerts.damaged_state_notice(state.cluster, damage.reason, damage.kept_at)
    return outbox.owe_notice(state, f"{state.cluster}:damaged:{digest}", text)


@dataclass(frozen=True)
class _Regrouped:
    """What bringing the fleet incidents up to date did: the clusters whose alerts it folded
    (their states changed after their checks), and the fleet state it saved (None: none)."""

    folded: frozenset[str] = frozenset()
    fleet: ClusterAlerts | None = None


class AlertDesk:
    """The alert use-cases over one store and one Slack gateway; shared by jobs and listeners."""

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
    ) -> None:
        self.settings = settings
        self.store = store
        self._metrics = metrics
        paging = Paging(settings.alerts.mention, settings.alerts.escalate_to)
        self._messages = AlertMessages(slack, metrics, paging, command=settings.slack.command)
        self._poster = poster or Poster(default_identity(), lambda: True, lambda: datetime.now(UTC))
        channel = settings.slack.alert_channel
        self._drain = Drain(
            store,
            self._messages,
            self._poster,
            channel,
            repair=repair_damaged,
            sleep=sleep,
            backoffs=backoffs,
        )
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._troubles: dict[str, trouble.Trouble] = {}
        self._verdicts = verdicts.Verdicts(self._judge, settings.kai.progressing_timeout)

    @property
    def _command_name(self) -> str:
        """The configured slash command (docs/design.md §1.3), named wherever a message suggests
        one."""
        return self.settings.slack.command

    @property
    def policy(self) -> alerts.Policy:
        a = self.settings.alerts
        return alerts.Policy(
            a.hold,
            a.repeat,
            a.failures_before_alert,
            self.settings.slack.alert_channel,
            escalate_after=a.escalate_after if a.escalate_to else None,
        )

    async def run_check(
        self,
        kube: PodLogReader,
        now: datetime,
        *,
        still_leader: Callable[[], bool] = lambda: True,
        reads: KubeReader | None = None,
    ) -> datetime | None:
        """One check of `kube.cluster`: read (through `reads` when given: a local copy kept
        current by watches), decide, save, post. Never raises for Kubernetes, Slack or store
        trouble (each is logged and counted). Returns when a hold it saw runs out (`due.
        next_look`), so a caller can check again then rather than an interval later.

        `still_leader` is asked again once the (possibly slow) read is done: a replica that lost
        the Lease meanwhile must leave the posting to the new holder. Each new incident's
        diagnosis is gathered after its root went out, then posted as its first reply.
        """
        cluster = kube.cluster
        step = await self._check_step(reads or kube, now)  # reading needs no lock
        if not still_leader():
            log.info("alerts of cluster %s: no longer the Lease holder; not posting", cluster)
            return None
        async with self._locks[cluster]:
            try:
                outcome = await self._apply(cluster, await self._grouping(cluster, step, now))
            except StoreUnavailable as e:
                log.error("alerts of cluster %s: cannot use the state store: %s", cluster, e)
                await self._store_trouble(cluster, now, str(e))
                return None
        self._count_alerts(outcome.state)
        await self._store_trouble(cluster, now, None)
        regrouped = await self._regroup(now)
        # What the check saved is what the cluster owes, unless a fleet incident took its alert
        known = None if cluster in regrouped.folded else outcome.state
        # roots first: a page never waits for its evidence
        await self.drain(cluster, known=known, fleet_known=regrouped.fleet)
        ready = await self._gather_evidence(kube, cluster, now, known)
        if ready:
            await self._drain.drain(cluster, only=ready)
        if self._groups_clusters:
            await self._gather_fleet_evidence(kube, now, regrouped.fleet)
        return due.next_look(outcome.state, self.settings.alerts.hold)

    @property
    def _groups_clusters(self) -> int:
        """`alerts.group_clusters` (0: each cluster's alerts are its own incidents)."""
        return self.settings.alerts.group_clusters

    @property
    def _fleet_wait(self) -> timedelta:
        """How long a cluster's new alert waits for the rest of the fleet before it pages
        alone: two `alerts.interval`. A cluster that broke at the same moment is first seen
        bad up to one interval later, so it fires up to one interval after this one; the
        second interval covers checks that run late."""
        return 2 * self.settings.alerts.interval

    async def _grouping(self, cluster: str, step: Step, now: datetime) -> Step:
        """`step`, then the cluster's alerts folded into the fleet incidents their group belongs
        to (`bot.alerts.fleet`), so a root the fleet owes is never owed here too. The other
        clusters' states are read before the lock: a later change is seen at `_regroup`."""
        if not self._groups_clusters:
            return step
        *states, fleet_state = await self._states(FLEET)
        others = [s for s in states if s.cluster != cluster]
        channel, at_least = self.settings.slack.alert_channel, self._groups_clusters
        wait = self._fleet_wait

        def grouped(state: ClusterAlerts) -> alerts.Outcome:
            outcome = step(state)
            groups = fleet.grouped([*others, outcome.state], fleet_state, at_least)
            folded = fleet.fold(outcome.state, groups, now, channel, wait)
            return alerts.Outcome(folded.state, (*outcome.effects, *folded.effects))

        return grouped

    async def _regroup(self, now: datetime) -> _Regrouped:
        """Fold every cluster's alerts of a group that just became fleet-wide (their own
        incidents end, pointing at the fleet's), then bring the fleet incidents up to date:
        opened, joined, recovered, resolved. Clusters first: a member the fleet state does not
        know yet is found at the next check; a fleet incident never owes a root a cluster owes
        too. Returns the clusters folded and the fleet state saved. Never raises (logged; the
        next check does it again)."""
        if not self._groups_clusters:
            return _Regrouped()
        channel, wait = self.settings.slack.alert_channel, self._fleet_wait
        folding: list[ClusterAlerts] = []
        try:
            async with self._locks[FLEET]:
                *states, fleet_state = await self._states(FLEET)
                groups = fleet.grouped(states, fleet_state, self._groups_clusters)
                folding = [s for s in states if fleet.needs_folding(s, groups, now, wait)]
                for state in folding:
                    fold: Step = lambda s: fleet.fold(s, groups, now, channel, wait)  # noqa: E731
                    async with self._locks[state.cluster]:
                        await self._apply(state.cluster, fold)
                    await self._drain.drain(state.cluster)
                if folding:  # else what was just read is what the fleet is advanced from
                    states = await self._states()
                policy = self.policy
                advanced = await self._apply(FLEET, lambda f: fleet.advance(f, states, now, policy))
        except StoreUnavailable as e:
            log.error("fleet incidents: cannot use the state store: %s", e)
            return _Regrouped(frozenset(s.cluster for s in folding))
        return _Regrouped(frozenset(s.cluster for s in folding), advanced.state)

    async def _gather_fleet_evidence(
        self, kube: PodLogReader, now: datetime, known: ClusterAlerts | None
    ) -> None:
        """The first reply of a new fleet incident: the diagnosis on the cluster just checked,
        when it is one of the incident's clusters (the one that made the group fleet-wide,
        usually); then its thread goes on. Nothing waits when the fleet state just `known`
        holds no such reply."""
        if known is not None and not outbox.awaiting_evidence(known):
            return
        ready = []
        try:
            waiting = outbox.awaiting_evidence((await self.store.load(FLEET)).state)
            if not waiting:
                return
            mine = {
                fleet.group_of(a.key): a
                for a in (await self.store.load(kube.cluster)).state.alerts.values()
                if a.grouped
            }
            for incident, owed in waiting:
                member = mine.get(fleet.group_of(incident.key))
                if member is None:
                    continue
                text, blocks = render_alerts.kept_evidence(await self._evidence(kube, member, now))
                change = _with_evidence(incident.incident, owed.effect_id, text, blocks)
                state = await update(self.store, FLEET, change, repair=repair_damaged)
                if _is_next(state, incident.incident, owed.effect_id):
                    ready.append(incident.incident)
        except StoreUnavailable as e:
            log.error("fleet incidents: cannot store a diagnosis: %s", e)
        if ready:
            await self._drain.drain(FLEET, only=ready)

    async def _states(self, *more: str) -> list[ClusterAlerts]:
        """Every configured cluster's stored alert state (then `more`'s), read at once: with
        alerts grouped, every check reads the whole fleet's."""
        names = [*(c.name for c in self.settings.clusters), *more]
        return [stored.state for stored in await self.store.load_many(names)]

    async def _gather_evidence(
        self, kube: PodLogReader, cluster: str, now: datetime, known: ClusterAlerts | None
    ) -> list[str]:
        """Diagnose the failing component of every incident whose first reply still waits for
        it, and store the rendered words in its outbox (once: a retry, a restart or another
        replica sends those same words). Returns the incidents whose thread can go on now
        (their root is in Slack). Nothing waits when the state just `known` holds no such
        reply (only a check owes one). Never raises: a diagnosis that fails is one line in the
        thread, a store that fails leaves it for the next check."""
        ready: list[str] = []
        if known is not None and not outbox.awaiting_evidence(known):
            return ready
        try:
            waiting = outbox.awaiting_evidence((await self.store.load(cluster)).state)
            for alert, owed in waiting:
                text, blocks = render_alerts.kept_evidence(await self._evidence(kube, alert, now))
                state = await update(
                    self.store,
                    cluster,
                    _with_evidence(alert.incident, owed.effect_id, text, blocks),
                    repair=repair_damaged,
                )
                if _is_next(state, alert.incident, owed.effect_id):
                    ready.append(alert.incident)
        except StoreUnavailable as e:
            log.error("alerts of cluster %s: cannot store a diagnosis: %s", cluster, e)
        return ready

    async def _evidence(self, kube: PodLogReader, alert: AlertState, now: datetime) -> Message:
        """The diagnosis of what `alert` points at, as `/kai diagnose` renders it; one line when
        there is nothing to look at or the cluster would not say."""
        key = alert.key
        if queue_checks.is_starvation(key):
            return await queue_checks.queue_evidence(
                kube, key, now, after=self.settings.alerts.starved_after, command=self._command_name
            )
        subject = subjects.subject_for_alert(
            key.kind,
            key.object,
            alert.observation.message,
            kai_namespace=self.settings.kai.namespace,
            apiservice=self.settings.keda.apiservice,
        )
        if subject is None:
            return render_alerts.no_evidence(key)
        try:
            diagnosis = await diagnostics.diagnose(kube, subject, now=now)
        except errors.KubeError as e:
            log.warning("%s: no diagnosis of %s: %s", alert.incident, subject.describe(), e)
            return render_diagnosis.failed_message(subject.describe(), key.cluster, e)
        except Exception:  # a bug must not cost the page its thread: say it, log it
            log.exception("%s: diagnosing %s failed", alert.incident, subject.describe())
            error = RuntimeError("an internal error (the details are in the service log)")
            return render_diagnosis.failed_message(subject.describe(), key.cluster, error)
        observed = alert.observation
        facts = causes.AlertFacts(
            key.kind, key.object, key.condition, observed.reason, observed.message
        )
        message = render_diagnosis.diagnosis_message(causes.explain(diagnosis, facts))
        command = f"{self._command_name} diagnose {subject.describe()}"
        footer = render_alerts.evidence_footer(command)
        return {**message, "blocks": [*message["blocks"], footer]}

    async def remind(
        self, cluster: str, held: Sequence[HeldObject], places: Sequence[Place], now: datetime
    ) -> None:
        """Reminders of the pauses and suspends without an end that a sweep saw held in
        `places` (`bot.alerts.reminders`): saved with what they owe, then delivered (on the
        Lease holder). Nothing when `changes.remind_after` is 0. Never raises for store or
        Slack trouble (logged; the next sweep tries again)."""
        after = self.settings.changes.remind_after
        if after <= timedelta(0):
            return
        policy = reminders.ReminderPolicy(after, self.settings.slack.alert_channel)
        async with self._locks[cluster]:
            try:
                await self._apply(cluster, lambda s: reminders.remind(s, held, places, now, policy))
            except StoreUnavailable as e:
                log.error("reminders of cluster %s: cannot use the state store: %s", cluster, e)
                return
        await self.drain(cluster)

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
        await self._drain.drain(cluster, known=known)
        if self._groups_clusters and cluster != FLEET:
            await self._drain.drain(FLEET, known=fleet_known)

    async def _store_trouble(self, cluster: str, now: datetime, error: str | None) -> None:
        """Without its state the desk cannot avoid duplicate posts, so it posts no alert: it
        says so in the alert channel instead (never a silent gap), and says when it is over."""
        await self.note_trouble(
            f"store:{cluster}",
            now,
            error=error,
            warning=(
                f":warning: kai-chatops cannot keep its alert state for cluster {cluster}, so "
                f"it posts no alerts for it until this is fixed: {escape(error or '')}"
            ),
            recovery=(
                f":white_check_mark: kai-chatops can keep its alert state for cluster {cluster} "
                "again: its alerts are checked and posted as before."
            ),
        )

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
        a = self.settings.alerts
        policy = trouble.TroublePolicy(a.failures_before_alert, a.hold, TROUBLE_REPEAT)
        known = self._troubles.get(key, trouble.Trouble())
        if error is None:
            known, due = trouble.succeeded(known, now, policy)
        else:
            known, due = trouble.failed(known, now, policy)
        kind, text = ("recovery", recovery) if error is None else ("warning", warning)
        if due and await self._say_once(f"{key}:{kind}", now, text, speaker=speaker):
            known = trouble.said(known, now, warning=error is not None)
        self._troubles[key] = known

    async def _say_once(self, kind: str, now: datetime, text: str, *, speaker: bool) -> bool:
        """Post `text` unless a replica already did this hour; whether Slack holds it. A look
        that cannot be made is "don't know": only the `speaker` posts then (the others try
        again at the next failure). Two replicas that both posted keep the older copy: each
        deletes every later one."""
        notice_id = f"{kind}:{now.astimezone(UTC):%Y%m%dT%H}"
        channel = self.settings.slack.alert_channel
        after = _hours_before(await self._messages.anchor(channel), NOTICE_LOOK_BACK_HOURS)
        copies = await self._messages.find_copies(channel, notice_id, after=after)
        if copies is None and not speaker:
            return False
        if not copies:
            owed = Owed(notice_id, EffectKind.NOTICE, text=text)
            attempt = Attempt(secrets.token_hex(6), self._poster.identity)
            sent = await self._messages.send(None, owed, attempt, channel)
            if sent.outcome is not Sent.APPLIED:
                return False
            copies = await self._messages.find_copies(channel, notice_id, after=after)
        for ts in (copies or [])[1:]:
            await self._messages.delete(channel, ts)
        return True

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
        return await self._command(
            cluster,
            alert_id,
            lambda i: lambda s: alerts.acknowledge(s, i, user, now, command=self._command_name),
            command_id,
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
        command_id: str = "",
    ) -> AlertState:
        """`user` silences the alert for `duration`; the thread and the root say so.

        Raises:
            UserError: no such active alert; StoreUnavailable.
        """
        return await self._command(
            cluster,
            alert_id,
            lambda i: (
                lambda s: alerts.silence(
                    s, i, user, duration, reason, now, command=self._command_name
                )
            ),
            command_id,
        )

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
        return await self._command(
            cluster,
            alert_id,
            lambda i: lambda s: alerts.unsilence(s, i, user, now, command=self._command_name),
            command_id,
        )

    async def list_alerts(self, cluster: str | None = None) -> list[ClusterAlerts]:
        """The stored state of one cluster, or of every configured cluster.

        Raises:
            StoreUnavailable.
        """
        names = [cluster] if cluster else [c.name for c in self.settings.clusters]
        states = [(await self.store.load(name)).state for name in names]
        if not self._groups_clusters:
            return states
        return fleet.shown_once(states, (await self.store.load(FLEET)).state, cluster)

    async def find(self, alert_id: str, cluster: str | None = None) -> AlertState:
        """The alert with that ID (active or pending), on `cluster` or on any cluster.

        Raises:
            UserError: no alert has that ID; StoreUnavailable.
        """
        for state in await self.list_alerts(cluster):
            found = state.find(alert_id)
            if found is not None:
                return found
        listing = f"{self._command_name} alerts"
        raise errors.UserError(f"No active alert {alert_id!r}; `{listing}` lists them.")

    async def _check_step(self, kube: KubeReader, now: datetime) -> Step:
        cluster, policy = kube.cluster, self.policy
        try:
            snapshot, starved = await asyncio.gather(
                usecases.read_snapshot(
                    kube,
                    self.settings.kai.namespace,
                    self.settings.keda.apiservice,
                    with_crds=False,
                ),
                queue_checks.starved_queues(
                    kube, now, after=self.settings.alerts.starved_after, command=self._command_name
                ),
            )
        except errors.KubeError as e:
            self._metrics.alert_checks.labels(cluster, "failed").inc()
            log.warning("alert check of cluster %s failed: %s", cluster, e)
            error = e

            def failed(state: ClusterAlerts) -> alerts.Outcome:
                seen = rules.cannot_check(cluster, error, state.failures + 1)
                return alerts.check_failed(state, seen, now, policy)

            return failed
        self._metrics.alert_checks.labels(cluster, "ok").inc()
        self._metrics.last_check.labels(cluster).set(now.timestamp())
        seen = self._verdicts.seen(cluster, snapshot, now) + starved
        return lambda state: alerts.observe(state, seen, now, policy)

    def _judge(self, cluster: str, snapshot: ClusterSnapshot, now: datetime) -> list[Observation]:
        """What is alert-worthy in one snapshot at `now` (`bot.alerts.verdicts` reuses it)."""
        timeout, apiservice = self.settings.kai.progressing_timeout, self.settings.keda.apiservice
        report = health.build_report(
            snapshot,
            cluster=cluster,
            now=now,
            progressing_timeout=timeout,
            apiservice_name=apiservice,
        )
        return rules.detect(
            snapshot,
            report,
            now=now,
            progressing_timeout=timeout,
            apiservice_name=apiservice,
            command=self._command_name,
        )

    async def _command(
        self, cluster: str | None, alert_id: str, act: Callable[[str], Step], command_id: str
    ) -> AlertState:
        """Apply `act(alert_id)` once (by its command ID: a fresh one when none is given), then
        drain. A cluster's alert grouped into a fleet incident is acted on as that incident:
        acknowledge and silence act on the whole of it."""
        command_id = command_id or secrets.token_hex(8)
        cluster, alert_id = await self._target(cluster, alert_id)
        step = act(alert_id)
        once: Step = lambda s: alerts.applied_once(s, alert_id, command_id, step)  # noqa: E731
        async with self._locks[cluster]:
            outcome = await self._apply(cluster, once)
        await self.drain(cluster)
        found = outcome.state.find(alert_id)
        if found is None:  # the steps above keep the alert they act on; this is a bug
            raise errors.UserError(f"Alert {alert_id} vanished while it was being changed.")
        return found

    async def _target(self, cluster: str | None, alert_id: str) -> tuple[str, str]:
        """The state document and alert ID a command on `alert_id` acts on.

        Raises:
            UserError: an unknown cluster, or no alert has that ID; StoreUnavailable.
        """
        if cluster == FLEET and self._groups_clusters:  # a fleet incident's buttons
            return FLEET, alert_id
        found: AlertState | None
        if cluster is None and self._groups_clusters:  # a member's ID too (`/kai alerts` hides it)
            found = next(filter(None, (s.find(alert_id) for s in await self._states())), None)
            found = found or await self.find(alert_id)
            cluster = found.key.cluster
        elif cluster is None:
            found = await self.find(alert_id)
            cluster = found.key.cluster
        else:
            self.settings.cluster(cluster)  # an unknown cluster is the user's mistake
            found = (await self.store.load(cluster)).state.find(alert_id)
        if self._groups_clusters and found is not None and found.grouped:
            return FLEET, found.fleet
        in_fleet = self._groups_clusters and found is None
        if in_fleet and (await self.store.load(FLEET)).state.find(alert_id) is not None:
            return FLEET, alert_id
        return cluster, alert_id

    async def _apply(self, cluster: str, step: Step) -> alerts.Outcome:
        """Load, step, save (only when something changed); redo the step on a conflict.

        Raises:
            StoreUnavailable: the store failed, or kept conflicting.
            UserError: the step refused (a command on an unknown alert, say).
        """

        def change(state: ClusterAlerts) -> tuple[ClusterAlerts, alerts.Outcome]:
            outcome = step(state)
            return outcome.state, outcome

        return await update(self.store, cluster, change, repair=repair_damaged)

    def _count_alerts(self, state: ClusterAlerts) -> None:
        for phase in Phase:
            if phase is not Phase.RESOLVED:
                count = sum(1 for a in state.alerts.values() if a.phase is phase)
                self._metrics.alerts.labels(state.cluster, phase.value).set(count)
