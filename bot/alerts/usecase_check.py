"""One alert check of a cluster: read a snapshot (a constant number of API requests), judge it
(`bot.alerts.rules`, `verdicts`), step the pure state machine (and remember what moved:
`bot.alerts.moves`) and save the new state with everything it owes Slack *before* anything
is sent; then deliver, roots first, and gather the new incidents' evidence. Never raises into
the scheduler: Kubernetes, Slack and store trouble is logged and counted, and a store that
keeps failing is said (`usecase_trouble`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from bot.alerts import (
    backlog,
    due,
    machine,
    moves,
    node_checks,
    queue_checks,
    rules,
    stall_checks,
    verdicts,
)
from bot.alerts import seen as seen_memory
from bot.alerts.courier import Couriers
from bot.alerts.machine import AlertStep, Transition
from bot.alerts.model import ClusterAlerts, Observation, Phase
from bot.alerts.store import StoreUnavailable
from bot.alerts.usecase_context import LOGGER, DeskContext
from bot.alerts.usecase_evidence import Evidence
from bot.alerts.usecase_fleet import FleetIncidents, Regrouped
from bot.alerts.usecase_trouble import TroubleNotices
from bot.core import errors
from bot.core.models import ClusterSnapshot
from bot.health import report, usecase
from bot.kube.ports import KubeReader, PodLogReader

log = logging.getLogger(LOGGER)

# Checks judged and saved at once. A fleet failing at once woke a thousand checks in the same
# moment, and each turn of the event loop ran them all, for seconds: the Lease's renewal came
# too late to act on, a command's ack waited, and every check read every other's state before
# any was saved (bench/fleet_ha.py). Their saves go to one API server, on the scheduled lane.
CHECKS_AT_ONCE = 16


class Check:
    """The check of every cluster by one desk (`AlertDesk.run_check`)."""

    def __init__(
        self,
        context: DeskContext,
        fleet: FleetIncidents,
        evidence: Evidence,
        troubles: TroubleNotices,
    ) -> None:
        self._context = context
        self._fleet = fleet
        self._evidence = evidence
        self._troubles = troubles
        timeout = context.settings.kai.progressing_timeout
        self._verdicts = verdicts.Verdicts(self._judge, timeout)
        self._revisions = moves.Revisions()
        self._turns = asyncio.Semaphore(CHECKS_AT_ONCE)

    async def run(
        self,
        kube: PodLogReader,
        reads: KubeReader,
        now: datetime,
        still_leader: Callable[[], bool],
        couriers: Couriers | None = None,
    ) -> datetime | None:
        """Read through `reads`, then save and deliver unless this replica lost the Lease
        meanwhile (the delivery handed to `couriers` when given, so the check does not wait
        for Slack); when a hold it saw runs out (`due.next_look`), or a scheduler would be
        stalled (`stall.next_look`). Never raises. At most CHECKS_AT_ONCE read, judge and save
        at a time; their delivery is apart."""
        cluster, context = kube.cluster, self._context
        async with self._turns:
            step, look_at = await self._step(reads, now)  # reading needs no lock
            if not still_leader():
                log.info("alerts of cluster %s: no longer the Lease holder; not posting", cluster)
                return None
            stepped = await self._save(cluster, step, now)
        if isinstance(stepped, StoreUnavailable):
            log.error("alerts of cluster %s: cannot use the state store: %s", cluster, stepped)
            await self._troubles.store_trouble(cluster, now, str(stepped))
            return None
        self._count_alerts(stepped.state, now)
        await self._troubles.store_trouble(cluster, now, None)
        if couriers is None:
            await self._deliver(kube, now, stepped)
        else:
            couriers.send(cluster, lambda: self._deliver(kube, now, stepped))
        held = due.next_look(stepped.state, context.settings.alerts.hold)
        return min((m for m in (held, look_at) if m is not None), default=None)

    async def _save(
        self, cluster: str, step: AlertStep, now: datetime
    ) -> Transition | StoreUnavailable:
        """`step` with the cluster's alerts folded into the fleet's, saved; or why the store
        refused it."""
        async with self._context.locks[cluster]:
            try:
                grouped = await self._fleet.grouping(cluster, step, now)
                return await self._context.apply(cluster, grouped)
            except StoreUnavailable as e:
                return e

    async def _deliver(self, kube: PodLogReader, now: datetime, stepped: Transition) -> None:
        """After the check's save: the fleet brought up to date, then what is owed sent, roots
        first (a page never waits for its evidence), then the evidence gathered and sent."""
        cluster, context = kube.cluster, self._context
        try:
            regrouped = await self._fleet.regroup(now, stepped.state)
        except StoreUnavailable as e:
            log.error("fleet incidents: cannot use the state store: %s", e)
            regrouped = Regrouped()
        if regrouped.fleet is not None:
            self._count_backlog(regrouped.fleet, now)
        # What the check saved is what the cluster owes, unless a fleet incident took its alert
        known = None if cluster in regrouped.folded else stepped.state
        await context.deliver(cluster, known, regrouped.fleet)
        ready = await self._evidence.gather(kube, cluster, now, known)
        if ready:
            await context.drain.drain(cluster, only=ready)
        if context.groups_clusters:
            await self._fleet.gather_evidence(kube, now, regrouped.fleet)

    async def _step(self, kube: KubeReader, now: datetime) -> tuple[AlertStep, datetime | None]:
        """What the read of `kube` saw, as a step of its state (the alerts it found, or one
        more failed check), and when a scheduler not stalled yet would be."""
        cluster, policy, settings = kube.cluster, self._context.policy, self._context.settings
        command, alerts = self._context.command, settings.alerts
        try:
            snapshot, starved, sick, kustomizations = await asyncio.gather(
                usecase.read_snapshot(
                    kube, settings.kai.namespace, settings.keda.apiservice, whole=False
                ),
                queue_checks.starved_queues(kube, now, after=alerts.starved_after, command=command),
                node_checks.sick_nodes(kube, enabled=alerts.gpu_nodes, command=command),
                self._revisions.read(kube, now),
            )
            stalled = await stall_checks.stalled_schedulers(
                kube, snapshot, now, after=alerts.stall_after, command=command
            )
        except errors.KubeError as e:
            self._context.metrics.alert_checks.labels(cluster, "failed").inc()
            log.warning("alert check of cluster %s failed: %s", cluster, e)
            error = e

            def failed(state: ClusterAlerts) -> Transition:
                seen = rules.cannot_check(cluster, error, state.failures + 1)
                return machine.check_failed(state, seen, now, policy)

            return failed, None
        self._context.metrics.alert_checks.labels(cluster, "ok").inc()
        self._context.metrics.last_check.labels(cluster).set(now.timestamp())
        seen = self._verdicts.seen(cluster, snapshot, now) + starved + sick + list(stalled.found)
        sighted, kinds = moves.sightings(snapshot, kustomizations)

        def observed(state: ClusterAlerts) -> Transition:
            stepped = machine.observe(state, seen, now, policy)
            remembered = seen_memory.remember(stepped.state.seen, sighted, kinds, now)
            return Transition(replace(stepped.state, seen=remembered), stepped.effects)

        return observed, stalled.look_at

    def _judge(self, cluster: str, snapshot: ClusterSnapshot, now: datetime) -> list[Observation]:
        """What is alert-worthy in one snapshot at `now` (`bot.alerts.verdicts` reuses it)."""
        settings = self._context.settings
        timeout, apiservice = settings.kai.progressing_timeout, settings.keda.apiservice
        built = report.build_report(
            snapshot,
            cluster=cluster,
            now=now,
            progressing_timeout=timeout,
            apiservice_name=apiservice,
        )
        return rules.detect(
            snapshot,
            built,
            now=now,
            progressing_timeout=timeout,
            apiservice_name=apiservice,
            command=self._context.command,
        )

    def _count_alerts(self, state: ClusterAlerts, now: datetime) -> None:
        metrics = self._context.metrics
        for phase in Phase:
            if phase is not Phase.RESOLVED:
                count = sum(1 for a in state.alerts.values() if a.phase is phase)
                metrics.alerts.labels(state.cluster, phase.value).set(count)
        self._count_backlog(state, now)

    def _count_backlog(self, state: ClusterAlerts, now: datetime) -> None:
        """How long the document (a cluster's, or the fleet incidents') has owed Slack."""
        age = backlog.oldest_age(state, now).total_seconds()
        self._context.metrics.outbox_oldest.labels(state.cluster).set(age)
