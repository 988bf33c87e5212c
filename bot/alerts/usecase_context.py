"""What every part of the alert desk shares: its settings, store, Slack messages, metrics,
poster, drain and per-cluster locks (`DeskContext`, built once per desk), and the one way
they step a stored state (`apply`: load, step, save, redo on conflict; a damaged document
repaired by `repair_damaged`). Holds no decision of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.alerts import machine, outbox, render
from bot.alerts.delivery import AlertMessages, MessageSender, Paging
from bot.alerts.drain import Drain, Poster
from bot.alerts.lease import default_identity
from bot.alerts.machine import AlertStep, Transition
from bot.alerts.model import FLEET, ClusterAlerts
from bot.alerts.pages import PageSender
from bot.alerts.store import AlertStore, Damage, update
from bot.config.settings import Settings
from bot.core.metrics import Metrics
from bot.core.models import Sleep

# Every part of the desk logs under the name the desk always had: log lines stay as they were.
LOGGER = "bot.alerts.desk"


def repair_damaged(state: ClusterAlerts, damage: Damage) -> ClusterAlerts:
    """Empty state owing one loud notice about the damaged document (once per damaged text)."""
    digest = hashlib.sha256(damage.text.encode()).hexdigest()[:12]
    text = render.damaged_state_notice(state.cluster, damage.reason, damage.kept_at)
    return outbox.owe_notice(state, f"{state.cluster}:damaged:{digest}", text)


@dataclass(frozen=True)
class DeskContext:
    """The desk's collaborators, shared by its parts (`bot.alerts.usecase.AlertDesk`). One lock
    per cluster serialises checks and commands within this process; the store's versions
    serialise them across replicas."""

    settings: Settings
    store: AlertStore
    metrics: Metrics
    messages: AlertMessages
    poster: Poster
    drain: Drain
    locks: defaultdict[str, asyncio.Lock] = field(default_factory=lambda: defaultdict(asyncio.Lock))

    @classmethod
    def open(
        cls,
        settings: Settings,
        store: AlertStore,
        slack: MessageSender | None,
        metrics: Metrics,
        *,
        poster: Poster | None,
        sleep: Sleep,
        backoffs: Sequence[float],
        pager: PageSender | None = None,
    ) -> DeskContext:
        """The context of one desk: its messages and drain over `store` and `slack`."""
        paging = Paging(settings.alerts.mention, settings.alerts.escalate_to)
        poster = poster or Poster(default_identity(), lambda: True, lambda: datetime.now(UTC))
        messages = AlertMessages(
            slack, metrics, paging, command=settings.slack.command, monotonic=poster.monotonic
        )
        channel = settings.slack.alert_channel
        drain = Drain(
            store,
            messages,
            poster,
            channel,
            repair=repair_damaged,
            sleep=sleep,
            backoffs=backoffs,
            pager=pager,
        )
        return cls(settings, store, metrics, messages, poster, drain)

    @property
    def command(self) -> str:
        """The configured slash command (docs/design.md §1.3), named wherever a message
        suggests one."""
        return self.settings.slack.command

    @property
    def channel(self) -> str:
        """The alert channel (`slack.alert_channel`)."""
        return self.settings.slack.alert_channel

    @property
    def policy(self) -> machine.Policy:
        a = self.settings.alerts
        return machine.Policy(
            a.hold,
            a.repeat,
            a.failures_before_alert,
            self.channel,
            escalate_after=a.escalate_after if a.escalate_to else None,
        )

    @property
    def groups_clusters(self) -> int:
        """`alerts.group_clusters` (0: each cluster's alerts are its own incidents)."""
        return self.settings.alerts.group_clusters

    @property
    def fleet_wait(self) -> timedelta:
        """How long a cluster's new alert waits for the rest of the fleet before it pages
        alone: two `alerts.interval`. A cluster that broke at the same moment is first seen
        bad up to one interval later, so it fires up to one interval after this one; the
        second interval covers checks that run late."""
        return 2 * self.settings.alerts.interval

    async def apply(self, cluster: str, step: AlertStep) -> Transition:
        """Load, step, save (only when something changed); redo the step on a conflict.

        Raises:
            StoreUnavailable: the store failed, or kept conflicting.
            UserError: the step refused (a command on an unknown alert, say).
        """

        def change(state: ClusterAlerts) -> tuple[ClusterAlerts, Transition]:
            stepped = step(state)
            return stepped.state, stepped

        return await update(self.store, cluster, change, repair=repair_damaged)

    async def states(self, *more: str) -> list[ClusterAlerts]:
        """Every configured cluster's stored alert state (then `more`'s), read at once: with
        alerts grouped, every check reads the whole fleet's.

        Raises:
            StoreUnavailable.
        """
        names = [*(c.name for c in self.settings.clusters), *more]
        return [stored.state for stored in await self.store.load_many(names)]

    async def deliver(
        self, cluster: str, known: ClusterAlerts | None, fleet: ClusterAlerts | None
    ) -> None:
        """What `cluster` owes Slack, then the fleet incidents' (with `alerts.group_clusters`),
        on the Lease holder only; `known`, `fleet`: the states just saved, if any. Never
        raises (`AlertDesk.drain`)."""
        await self.drain.drain(cluster, known=known)
        if self.groups_clusters and cluster != FLEET:
            await self.drain.drain(FLEET, known=fleet)
