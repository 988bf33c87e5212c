"""Fleet regrouping (`alerts.group_clusters`): the same alert on N clusters or more is one
incident. A cluster's alerts are folded into the fleet incident of their group in the same
state write that saw them fire (`grouping`), the clusters that paged alone before the group
became fleet-wide are folded after (`regroup`), and the fleet incidents are brought up to date
from every cluster's state; the decisions are the pure `bot.alerts.fleet`'s.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from bot.alerts import fleet, outbox
from bot.alerts.machine import AlertStep, Transition
from bot.alerts.model import FLEET, ClusterAlerts
from bot.alerts.store import StoreUnavailable
from bot.alerts.usecase_context import LOGGER, DeskContext
from bot.alerts.usecase_evidence import Evidence
from bot.kube.ports import PodLogReader

log = logging.getLogger(LOGGER)


@dataclass(frozen=True)
class Regrouped:
    """What bringing the fleet incidents up to date did: the clusters whose alerts it folded
    (their states changed after their checks), and the fleet state it saved (None: none)."""

    folded: frozenset[str] = frozenset()
    fleet: ClusterAlerts | None = None  # as saved, or as read when there was nothing to do


class FleetIncidents:
    """The fleet incidents of one desk, kept in the state document `FLEET`."""

    def __init__(self, context: DeskContext, evidence: Evidence) -> None:
        self._context = context
        self._evidence = evidence
        self._asked = 0  # regroupings asked for so far
        self._answered = 0  # of those, how many the last one run has answered
        self._last = Regrouped()
        # The clusters with an alert firing as last read or checked, and when every state was
        # last read (None: not yet).
        self._firing: set[str] = set()
        self._read_at: datetime | None = None

    async def grouping(self, cluster: str, step: AlertStep, now: datetime) -> AlertStep:
        """`step`, then the cluster's alerts folded into the fleet incidents their group belongs
        to (`bot.alerts.fleet`), so a root the fleet owes is never owed here too. The other
        clusters' states are read before the lock: a later change is seen at `regroup`.

        They are read only when the step leaves an alert of this cluster firing: folding
        looks at no other (a fleet at rest, or every hold of a fleet failing at once still
        running, read all thousand states at each check for nothing). One that fires when
        its state changed meanwhile waits for the fleet, as with no group fleet-wide.

        Raises:
            StoreUnavailable.
        """
        context = self._context
        if not context.groups_clusters:
            return step
        others: list[ClusterAlerts] = []
        fleet_state = ClusterAlerts(FLEET)
        if _fires(step((await context.store.load(cluster)).state).state):
            *states, fleet_state = await context.states(FLEET)
            others = [s for s in states if s.cluster != cluster]
        channel, at_least, wait = context.channel, context.groups_clusters, context.fleet_wait

        def grouped(state: ClusterAlerts) -> Transition:
            stepped = step(state)
            groups = fleet.grouped([*others, stepped.state], fleet_state, at_least)
            folded = fleet.fold(stepped.state, groups, now, channel, wait)
            return Transition(folded.state, (*stepped.effects, *folded.effects))

        return grouped

    async def regroup(self, now: datetime, checked: ClusterAlerts | None = None) -> Regrouped:
        """Fold every cluster's alerts of a group that just became fleet-wide (their own
        incidents end, pointing at the fleet's), then bring the fleet incidents up to date:
        opened, joined, recovered, no longer watched (left the configuration), resolved; the
        thread tells who joined or left at most once per `alerts.interval`. Clusters first: a
        member the fleet state does not know yet is found at the next check; a fleet incident
        never owes a root a cluster owes too. Returns the clusters folded and the fleet state
        saved. Never raises (logged; the next check does it again).

        One at a time, and shared: a regrouping that began after this one was asked for read
        every state saved before it, so it answers this one too. Each reads every cluster's
        state, and a fleet failing at once asks for one after each of its thousand checks:
        run one by one, they held the fleet's root back for seconds (bench/fleet_ha.py).

        After a check (its state saved, `checked`) it runs only when something may be grouped:
        an alert firing on some cluster, or a fleet incident kept. A fleet failing at once
        first saves a thousand alerts whose hold runs, and a regrouping after each read every
        state for nothing: two thirds of the holder's time, and the checks that would fire
        waited behind them (bench/fleet_ha.py).

        Raises:
            StoreUnavailable: only while deciding that nothing may be grouped (the fleet
            state unreadable).
        """
        if not self._context.groups_clusters:
            return Regrouped()
        if checked is not None:
            nothing = await self._nothing_to_group(checked, now)
            if nothing is not None:
                return Regrouped(fleet=nothing)
        self._asked += 1
        ticket = self._asked
        async with self._context.locks[FLEET]:
            if self._answered >= ticket:
                return self._last
            answers = self._asked
            self._last = await self._regroup(now)
            self._answered = answers
            return self._last

    async def _nothing_to_group(
        self, checked: ClusterAlerts, now: datetime
    ) -> ClusterAlerts | None:
        """The fleet state when nothing may be grouped: no alert fires on `checked` nor, as
        this replica last read or checked them, on any other cluster, and no fleet incident
        is kept (none to advance). Otherwise None. Every state is read again at least once an
        `alerts.interval` all the same: another replica may have written them meanwhile (the
        holder before a takeover).

        Raises:
            StoreUnavailable.
        """
        firing, read_at = self._firing, self._read_at
        if read_at is None or now - read_at >= self._context.settings.alerts.interval:
            return None
        if _fires(checked):
            firing.add(checked.cluster)
            return None
        firing.discard(checked.cluster)
        if firing:
            return None
        fleet_state = (await self._context.store.load(FLEET)).state
        return None if fleet_state.alerts or fleet_state.closing else fleet_state

    async def _regroup(self, now: datetime) -> Regrouped:
        """`regroup`'s work, under the fleet's lock."""
        context = self._context
        folding: list[str] = []
        try:
            *states, fleet_state = await context.states(FLEET)
            self._firing, self._read_at = {s.cluster for s in states if _fires(s)}, now
            groups = fleet.grouped(states, fleet_state, context.groups_clusters)
            wait = context.fleet_wait
            folding = [s.cluster for s in states if fleet.needs_folding(s, groups, now, wait)]
            await self._fold(folding, groups, now)
            if folding:  # else what was just read is what the fleet is advanced from
                states = await context.states()
            policy, every = context.policy, context.settings.alerts.interval
            advance: AlertStep = lambda f: fleet.advance(  # noqa: E731
                f, states, now, policy, tell_every=every
            )
            advanced = await context.apply(FLEET, advance)
        except StoreUnavailable as e:
            log.error("fleet incidents: cannot use the state store: %s", e)
            return Regrouped(frozenset(folding))
        return Regrouped(frozenset(folding), advanced.state)

    async def _fold(
        self, clusters: list[str], groups: frozenset[fleet.Group], now: datetime
    ) -> None:
        """Fold the alerts of `clusters` into their fleet incidents, each then drained (its
        own incident's last reply and edit), all at once: when a fleet fails at once hundreds
        fold together, and one by one their saves held the fleet's root back for seconds.

        Raises:
            StoreUnavailable (the first, once every other fold is done).
        """
        context = self._context
        channel, wait = context.channel, context.fleet_wait
        fold: AlertStep = lambda s: fleet.fold(s, groups, now, channel, wait)  # noqa: E731

        async def fold_one(cluster: str) -> None:
            async with context.locks[cluster]:
                folded = await context.apply(cluster, fold)
            await context.drain.drain(cluster, known=folded.state)

        done = await asyncio.gather(*(fold_one(c) for c in clusters), return_exceptions=True)
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome

    async def gather_evidence(
        self, kube: PodLogReader, now: datetime, known: ClusterAlerts | None
    ) -> None:
        """The first replies of a new fleet incident: the diagnosis (and what changed) on the
        cluster just checked, when it is one of the incident's clusters (the one that made the
        group fleet-wide, usually); then its thread goes on. Nothing waits when the fleet
        state just `known` holds no such reply. Never raises."""
        if known is not None and not outbox.awaiting_evidence(known):
            return
        ready = []
        try:
            store = self._context.store
            waiting = outbox.awaiting_evidence((await store.load(FLEET)).state)
            if not waiting:
                return
            members = (await store.load(kube.cluster)).state.alerts.values()
            mine = {fleet.group_of(a.key): a for a in members if a.grouped}
            for incident, owed in waiting:
                member = mine.get(fleet.group_of(incident.key))
                if member is None:
                    continue
                message = await self._evidence.reply(kube, member, owed, now)
                if await self._evidence.keep(FLEET, incident.incident, owed, message):
                    ready.append(incident.incident)
        except StoreUnavailable as e:
            log.error("fleet incidents: cannot store a diagnosis: %s", e)
        if ready:
            await self._context.drain.drain(FLEET, only=ready)


def _fires(state: ClusterAlerts) -> bool:
    """Whether an alert of `state` is firing (only those are ever folded)."""
    return any(alert.is_active for alert in state.alerts.values())
