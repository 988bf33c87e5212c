"""The on-call commands on the stored alerts: `/kai alerts` and finding an alert by its ID, and
acknowledge, silence and unsilence applied once (by a command ID: a store write redone after
a conflict changes nothing the second time), then drained. A cluster's alert grouped into a
fleet incident is acted on as that incident. The steps are the pure `bot.alerts.machine`'s.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from bot.alerts import fleet, machine
from bot.alerts.courier import Couriers
from bot.alerts.machine import AlertStep
from bot.alerts.model import ALERTMANAGER, FLEET, AlertState, ClusterAlerts
from bot.alerts.usecase_context import DeskContext
from bot.core import errors

# A command on one alert: its ID (as the command acts on it) -> the step of the state.
Act = Callable[[str], AlertStep]
# How long a command's answer waits for what it owes Slack (the thread's "acknowledged by"
# reply, the root's edit) before it says what the state now holds: a drain behind Slack's
# budget, an outage or another delivery may take minutes, and the answer must not.
ANSWER_WAITS = 2.0


class OnCallCommands:
    """What the on-call asks of the stored alerts (`AlertDesk.acknowledge`, ...)."""

    def __init__(self, context: DeskContext, couriers: Couriers) -> None:
        self._context = context
        self._couriers = couriers

    async def list_alerts(self, cluster: str | None = None) -> list[ClusterAlerts]:
        """The stored state of one cluster, or of every configured cluster; a fleet incident
        once, not again under each of its clusters.

        Raises:
            UserError: no cluster of that name is configured; StoreUnavailable.
        """
        context = self._context
        if cluster is not None:
            context.settings.cluster(cluster)  # an unknown cluster is the user's mistake
        names = [cluster] if cluster else [c.name for c in context.settings.clusters]
        states = [(await context.store.load(name)).state for name in names]
        if context.groups_clusters:
            states = fleet.shown_once(states, (await context.store.load(FLEET)).state, cluster)
        if cluster is None and context.settings.alertmanager is not None:
            groups = (await context.store.load(ALERTMANAGER)).state
            states += [groups] if any(a.is_active for a in groups.alerts.values()) else []
        return states

    async def find(self, alert_id: str, cluster: str | None = None) -> AlertState:
        """The alert with that ID (active or pending), on `cluster` or on any cluster.

        Raises:
            UserError: no alert has that ID; StoreUnavailable.
        """
        for state in await self.list_alerts(cluster):
            found = state.find(alert_id)
            if found is not None:
                return found
        listing = f"{self._context.command} alerts"
        raise errors.UserError(f"No active alert {alert_id!r}; `{listing}` lists them.")

    async def run(
        self, cluster: str | None, alert_id: str, act: Act, command_id: str
    ) -> AlertState:
        """Apply `act(alert_id)` once (by its command ID: a fresh one when none is given), then
        drain (by the cluster's courier, waited for ANSWER_WAITS at most). A cluster's alert
        grouped into a fleet incident is acted on as that incident: acknowledge and silence act
        on the whole of it.

        Raises:
            UserError: an unknown cluster or alert, or the step refused; StoreUnavailable.
        """
        context = self._context
        command_id = command_id or secrets.token_hex(8)
        cluster, alert_id = await self.target(cluster, alert_id)
        step = act(alert_id)
        once: AlertStep = lambda s: machine.applied_once(s, alert_id, command_id, step)  # noqa: E731
        async with context.locks[cluster]:
            stepped = await context.apply(cluster, once)
        self._couriers.send(cluster, lambda: context.deliver(cluster, None, None), kind="command")
        await self._couriers.settled(cluster, ANSWER_WAITS)
        found = stepped.state.find(alert_id)
        if found is None:  # the steps above keep the alert they act on; this is a bug
            raise errors.UserError(f"Alert {alert_id} vanished while it was being changed.")
        return found

    async def target(self, cluster: str | None, alert_id: str) -> tuple[str, str]:
        """The state document and alert ID a command on `alert_id` acts on.

        Raises:
            UserError: an unknown cluster, or no alert has that ID; StoreUnavailable.
        """
        context, grouping = self._context, bool(self._context.groups_clusters)
        if cluster == ALERTMANAGER and context.settings.alertmanager is not None:
            return ALERTMANAGER, alert_id  # an Alertmanager group's buttons
        if cluster == FLEET and grouping:  # a fleet incident's buttons
            return FLEET, alert_id
        found: AlertState | None
        if cluster is None and grouping:  # a member's ID too (`/kai alerts` hides it)
            found = next(filter(None, (s.find(alert_id) for s in await context.states())), None)
            found = found or await self.find(alert_id)
            cluster = found.key.cluster
        elif cluster is None:
            found = await self.find(alert_id)
            cluster = found.key.cluster
        else:
            context.settings.cluster(cluster)  # an unknown cluster is the user's mistake
            found = (await context.store.load(cluster)).state.find(alert_id)
        if grouping and found is not None and found.grouped:
            return FLEET, found.fleet
        in_fleet = grouping and found is None
        if in_fleet and (await context.store.load(FLEET)).state.find(alert_id) is not None:
            return FLEET, alert_id
        return cluster, alert_id
