"""One incident for a fleet-wide failure (`alerts.group_clusters`): the pure grouping rules.

An alert of one kind, object and condition (a *group*) firing on `group_clusters` clusters or
more is one *fleet incident*, kept in a state document of its own (`FLEET`), with its own
root, thread and outbox: the same delivery as every alert. Each cluster's alert still fires and
resolves after `hold` on its cluster's state; once grouped it is a *member* (its `fleet` names
the incident) and says nothing itself. The fleet incident says who joined and who recovered
in its thread, and resolves when its last member has recovered.

Already paged, then folded in: clusters whose own root went out before the group reached the
count (each paged once, as any alert below the count does) have that incident closed with a
last reply pointing at the fleet incident and their root edited to say so (no buttons): one
visible live root per failure. The fleet root then lists them as already paged and mentions
nobody again; a fleet incident whose clusters all joined before paging mentions
`alerts.mention` once. A cluster that joins later is a reply, never a page.

Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from bot.alerts import machine, outbox
from bot.alerts.model import (
    FLEET,
    WAITING,
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Owed,
    Severity,
)

Group = tuple[str, str, str]  # kind, object, condition: the same alert on any cluster
ONE_TICK = timedelta(microseconds=1)


def group_of(key: AlertKey) -> Group:
    return (key.kind, key.object, key.condition)


def fleet_key(group: Group) -> AlertKey:
    return AlertKey(FLEET, *group)


def firing(states: Iterable[ClusterAlerts]) -> dict[Group, list[str]]:
    """Each group and the clusters it fires on (members included), in the states' order."""
    found: dict[Group, list[str]] = {}
    for state in states:
        for alert in state.alerts.values():
            if alert.is_active and state.cluster != FLEET:
                found.setdefault(group_of(alert.key), []).append(state.cluster)
    return found


def grouped(
    states: Iterable[ClusterAlerts], fleet: ClusterAlerts, at_least: int
) -> frozenset[Group]:
    """The groups followed as fleet incidents: those with one open, and those firing on
    `at_least` clusters (0: grouping is off)."""
    if at_least < 2:
        return frozenset()
    open_ = {group_of(key) for key, alert in fleet.alerts.items() if alert.is_active}
    return frozenset(
        group for group, where in firing(states).items() if group in open_ or len(where) >= at_least
    )


def needs_folding(
    state: ClusterAlerts, groups: frozenset[Group], now: datetime, wait: timedelta
) -> bool:
    """Whether `fold` would change anything in `state` (never without alerts: a fleet's
    clusters at rest, looked at in every check)."""
    return bool(state.alerts) and fold(state, groups, now, "", wait).state != state


def fold(
    state: ClusterAlerts,
    groups: frozenset[Group],
    now: datetime,
    channel: str,
    wait: timedelta = timedelta(0),
) -> machine.Transition:
    """The cluster's firing alerts of `groups` become members of their fleet incidents; the
    others that just fired wait up to `wait` (two `alerts.interval`: every other cluster that
    broke with it has fired meanwhile) before they page on their own.

    One whose root was never tried is simply taken over (nothing of it reached Slack); one
    whose root went out (or may have) ends its own incident: a last reply naming the fleet
    incident, its root edited to say so, its channel swept, like a resolution. A waiting alert
    whose group did not become fleet-wide, or a member whose fleet incident never opened, is
    a cluster's alert again and owes its root: never a silent gap.
    """
    effects: list[Owed] = []
    for key, alert in state.alerts.items():
        if not alert.is_active:
            continue
        group = group_of(key)
        fleet_id = fleet_key(group).alert_id
        fired_for = now - (alert.firing_since or now)
        said = bool(alert.root_ts) or any(o.was_attempted for o in alert.outbox)
        if group in groups and not alert.grouped and not said:
            state = state.with_alert(replace(alert, fleet=fleet_id, outbox=(), root_channel=""))
        elif group in groups and not alert.grouped:
            state = _folded(state, alert, fleet_id, now)
            effects.extend(state.closing[-1].outbox[:-1])
        elif group in groups:
            continue
        elif alert.fleet and (alert.grouped or fired_for >= wait):
            state = state.with_alert(_released(alert, channel, now))
            effects.extend(state.alerts[key].outbox)
        elif not alert.fleet and not said and fired_for < wait:
            state = state.with_alert(replace(alert, fleet=WAITING, outbox=(), root_channel=""))
    return machine.Transition(state, tuple(effects))


def _folded(state: ClusterAlerts, alert: AlertState, fleet_id: str, now: datetime) -> ClusterAlerts:
    """`alert`'s own incident ends pointing at the fleet's; it goes on as a member."""
    closed = replace(alert, resolved_at=now, fleet=fleet_id)
    closed = outbox.owe(closed, EffectKind.REPLY, Note(NoteKind.GROUPED, now, reason=fleet_id))
    closed = outbox.owe(outbox.owe(closed, EffectKind.EDIT), EffectKind.SWEEP)
    paged = alert.observation.severity is Severity.CRITICAL
    member = AlertState(
        alert.observation,
        first_seen=max(now, alert.first_seen + ONE_TICK),  # another incident ID
        firing_since=alert.firing_since,
        clear_since=alert.clear_since,
        fleet=fleet_id,
        paged=(state.cluster,) if paged else (),
    )
    return replace(state.with_alert(member), closing=(*state.closing, closed))


def _released(alert: AlertState, channel: str, now: datetime) -> AlertState:
    """A cluster's alert again: it owes its root and diagnosis, as when it fired."""
    alert = replace(alert, fleet="", paged=(), root_channel=channel)
    root = outbox.owe(alert, EffectKind.ROOT)
    return outbox.owe(root, EffectKind.REPLY, Note(NoteKind.DIAGNOSIS, now))


def advance(
    fleet: ClusterAlerts, states: Sequence[ClusterAlerts], now: datetime, policy: machine.Policy
) -> machine.Transition:
    """The fleet incidents after the clusters' states `states` changed: a new one for a group
    whose members appeared, a reply (and the root edited) per cluster that joined or
    recovered, the resolution once no member is left. The hold was each member's own: the
    fleet incident fires and resolves at once (`hold` 0)."""
    members: dict[Group, list[AlertState]] = {}
    for state in states:
        for alert in state.alerts.values():
            if alert.grouped and alert.is_active:
                members.setdefault(group_of(alert.key), []).append(alert)
    effects: list[Owed] = []
    for key, incident in fleet.alerts.items():
        if incident.is_active:
            clusters = [a.key.cluster for a in members.get(group_of(key), [])]
            incident, owed = _roll_call(incident, clusters, now)
            fleet = fleet.with_alert(incident)
            effects.extend(owed)
    seen = [_observation(group, alerts) for group, alerts in members.items()]
    observed = machine.observe(fleet, seen, now, replace(policy, hold=timedelta(0)))
    fleet = observed.state
    for group, alerts in members.items():
        new = fleet.alerts.get(fleet_key(group))
        if new is not None and not new.clusters:
            paged = tuple(a.key.cluster for a in alerts if a.paged)
            names = tuple(a.key.cluster for a in alerts)
            fleet = fleet.with_alert(replace(new, clusters=names, paged=paged))
    return machine.Transition(fleet, (*effects, *observed.effects))


def shown_once(
    states: Sequence[ClusterAlerts], fleet: ClusterAlerts, cluster: str | None = None
) -> list[ClusterAlerts]:
    """The states as `/kai alerts` and the Home tab list them: each fleet incident once (with
    its clusters), its members not again under their clusters; only the fleet incidents
    `cluster` is in when one is named."""
    shown = [replace(s, alerts={k: a for k, a in s.alerts.items() if not a.fleet}) for s in states]
    incidents = {
        k: a
        for k, a in fleet.alerts.items()
        if a.is_active and (cluster is None or cluster in a.clusters)
    }
    return [*shown, replace(fleet, alerts=incidents)] if incidents else shown


def _roll_call(
    incident: AlertState, firing_now: Sequence[str], now: datetime
) -> tuple[AlertState, list[Owed]]:
    """Who joined and who recovered since the last look: one reply each, then the root edited
    to list them."""
    still = [c for c in incident.clusters if c not in incident.recovered]
    joined = [c for c in firing_now if c not in still]
    left = [c for c in still if c not in firing_now]
    if not joined and not left:
        return incident, []
    clusters = (*incident.clusters, *(c for c in joined if c not in incident.clusters))
    recovered = tuple(c for c in (*incident.recovered, *left) if c not in joined)
    incident = replace(incident, clusters=clusters, recovered=recovered)
    notes = [
        *(Note(NoteKind.JOINED, now, reason=c) for c in joined),
        *(Note(NoteKind.RECOVERED, now, reason=c) for c in left),
    ]
    for note in notes:
        incident = outbox.owe(incident, EffectKind.REPLY, note)
    incident = outbox.owe(incident, EffectKind.EDIT)
    return incident, list(incident.outbox[-(len(joined) + len(left) + 1) :])


def _observation(group: Group, alerts: Sequence[AlertState]) -> Observation:
    """What the fleet incident shows: the worst severity, the first member's words."""
    first = alerts[0].observation
    critical = any(a.observation.severity is Severity.CRITICAL for a in alerts)
    since = min(a.observation.since or a.firing_since or a.first_seen for a in alerts)
    return replace(
        first,
        key=fleet_key(group),
        severity=Severity.CRITICAL if critical else Severity.WARNING,
        since=since,
        immediate=False,
        waited_out=False,
    )
