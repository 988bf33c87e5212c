"""Incidents whose source is outside the bot (Alertmanager's notification groups,
`bot.integrations`): a source's step saved in its own state document, then delivered by the
same drain, on the Lease holder only; a periodic look (`tick`) brings their reminders,
escalation and silence expiry as a check does a cluster's; the diagnosis of a group whose
labels name a KAI or KEDA component is gathered on the cluster it names. A silence of such an
incident is made in its source first (`ExternalSilences`): a source that does not answer
refuses the silence, and nothing is changed here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from bot.alerts import machine, outbox
from bot.alerts.machine import AlertStep, Transition
from bot.alerts.model import AlertState, ClusterAlerts
from bot.alerts.store import StoreUnavailable
from bot.alerts.usecase_context import LOGGER, DeskContext
from bot.alerts.usecase_evidence import Evidence
from bot.kube.ports import PodLogReader

log = logging.getLogger(LOGGER)

# The cluster whose component an incident's diagnosis looks at (where its labels point).
KubeOf = Callable[[AlertState], PodLogReader]


class ExternalSilences(Protocol):
    """Silences kept by the incident's source (Alertmanager's API v2)."""

    async def silence(
        self, alert: AlertState, user: str, until: datetime, reason: str, now: datetime
    ) -> str:
        """Make (or replace: `alert.silence_id`) the source's silence; its ID.

        Raises:
            UserError: the source refused or did not answer (the words say which).
        """
        ...

    async def expire(self, silence_id: str) -> None:
        """End the source's silence now (one already gone is fine).

        Raises:
            UserError: the source refused or did not answer.
        """
        ...


class ExternalIncidents:
    """The incidents of one outside source's state document (`document`)."""

    def __init__(self, context: DeskContext, evidence: Evidence, document: str) -> None:
        self._context = context
        self._evidence = evidence
        self.document = document

    async def save(self, step: AlertStep) -> Transition:
        """`step` saved, before anything is sent (`deliver` sends it, on the Lease holder; on
        another replica the holder's `tick` does).

        Raises:
            StoreUnavailable: nothing was saved (the source should send it again).
        """
        async with self._context.locks[self.document]:
            return await self._context.apply(self.document, step)

    async def tick(self, kube_of: KubeOf, now: datetime) -> None:
        """Reminders, escalation and silences ending, as a check of a cluster brings them (the
        source says when its incidents fire and resolve: `hold` is its own), then the drain.
        Never raises (logged; the next tick does it again)."""
        policy = replace(self._context.policy, hold=machine.NO_HOLD)

        def step(state: ClusterAlerts) -> Transition:
            if not state.alerts:
                return Transition(state)
            seen = [a.observation for a in state.alerts.values() if a.is_active]
            return machine.observe(state, seen, now, policy)

        try:
            async with self._context.locks[self.document]:
                stepped = await self._context.apply(self.document, step)
        except StoreUnavailable as e:
            log.error("%s: cannot use the state store: %s", self.document, e)
            return
        await self.deliver(stepped.state, kube_of, now)

    async def deliver(self, known: ClusterAlerts, kube_of: KubeOf, now: datetime) -> None:
        """What the document owes, roots first, then the evidence it waits for (a diagnosis,
        what changed before), gathered on the Lease holder only. Never raises."""
        context = self._context
        await context.drain.drain(self.document, known=known)
        if not context.poster.is_holder() or not outbox.awaiting_evidence(known):
            return
        ready = []
        try:
            state = (await context.store.load(self.document)).state
            for alert, owed in outbox.awaiting_evidence(state):
                message = await self._evidence.reply(kube_of(alert), alert, owed, now)
                if await self._evidence.keep(self.document, alert.incident, owed, message):
                    ready.append(alert.incident)
        except StoreUnavailable as e:
            log.error("%s: cannot store a diagnosis: %s", self.document, e)
        if ready:
            await context.drain.drain(self.document, only=ready)
