"""One incident for a fleet-wide failure (`alerts.group_clusters`): the pure grouping rules.

An alert of one kind, object and condition (a *group*) firing on `group_clusters` clusters or
more is one *fleet incident*, kept in a state document of its own (`FLEET`), with its own
root, thread and outbox: the same delivery as every alert. Each cluster's alert still fires and
resolves after `hold` on its cluster's state; once grouped it is a *member* (its `fleet` names
the incident) and says nothing itself. The fleet incident's root lists its clusters as they
join, recover, or leave the configuration ("no longer watched", never "recovered"); its thread
tells who joined and who left in one reply each, at most once per `alerts.interval`. It
resolves when its last member has recovered, and ends without claiming so when the last ones
left the configuration.

Already paged, then folded in: clusters whose own root went out before the group reached the
count (each paged once, as any alert below the count does) have that incident closed with a
last reply pointing at the fleet incident and their root edited to say so (no buttons): one
visible live root per failure. The fleet root then lists them as already paged and mentions
nobody again; a fleet incident whose clusters all joined before paging mentions
`alerts.mention` once. A cluster that joins later is a reply, never a page.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from bot.alerts import machine, outbox
from bot.alerts.model import (
    CLUSTERS_SEPARATOR,
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


@functools.lru_cache(maxsize=1024)
def fleet_id_of(group: Group) -> str:
    """The ID of `group`'s fleet incident (a hash: each of a fleet's clusters asks at each look)."""
    return fleet_key(group).alert_id


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
    """Whether `fold` would change anything in `state`: never without an alert firing (a
    fleet's clusters at rest, or whose holds still run, looked at in every regrouping)."""
    if not state.alerts:
        return False
    folded = fold(state, groups, now, "", wait).state  # the same one when nothing changed
    return folded is not state and folded != state


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
        if group in groups and alert.grouped:
            continue  # a member already: looked at for each of a fleet's clusters at each check
        fleet_id = fleet_id_of(group)
        fired_for = now - (alert.firing_since or now)
        said = bool(alert.root_ts) or any(o.was_attempted for o in alert.outbox)
        if group in groups and not said:
            state = state.with_alert(replace(alert, fleet=fleet_id, outbox=(), root_channel=""))
        elif group in groups:
            state = _folded(state, alert, fleet_id, now)
            effects.extend(state.closing[-1].outbox[:-1])
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
    """A cluster's alert again: it owes its root, diagnosis and what changed, as when it
    fired."""
    alert = replace(alert, fleet="", paged=(), root_channel=channel)
    return machine.owe_evidence(outbox.owe(alert, EffectKind.ROOT), now)


def advance(
    fleet: ClusterAlerts,
    states: Sequence[ClusterAlerts],
    now: datetime,
    policy: machine.Policy,
    tell_every: timedelta = timedelta(0),
) -> machine.Transition:
    """The fleet incidents after the clusters' states `states` (every configured cluster's)
    changed: a new one for a group whose members appeared, its root edited and its thread told
    who joined or left (`_roll_call`), the resolution once no member is left. The hold was each
    member's own: the fleet incident fires and resolves at once (`hold` 0)."""
    members: dict[Group, list[AlertState]] = {}
    for state in states:
        for alert in state.alerts.values():
            if alert.grouped and alert.is_active:
                members.setdefault(group_of(alert.key), []).append(alert)
    watched = frozenset(s.cluster for s in states)
    effects: list[Owed] = []
    for key, incident in fleet.alerts.items():
        if incident.is_active:
            clusters = [a.key.cluster for a in members.get(group_of(key), [])]
            called = _roll_call(incident, clusters, watched, now, tell_every)
            fleet = fleet.with_alert(called)
            effects.extend(o for o in called.outbox if o not in incident.outbox)
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
    incident: AlertState,
    firing_now: Sequence[str],
    watched: frozenset[str],
    now: datetime,
    tell_every: timedelta,
) -> AlertState:
    """Who joined and who left since the last look: the root edited to list them at once (a
    cluster that left the configuration is "no longer watched", never "recovered"), and the
    thread told (`_tell`). Clusters that join before the root was sent are in its list."""
    before = incident.firing_clusters
    was, firing = set(before), set(firing_now)  # a fleet is a thousand: no scan of each
    joined = [c for c in firing_now if c not in was]
    left = [c for c in before if c not in firing]
    if not joined and not left:
        return _tell(incident, now, tell_every, ())
    known = set(incident.clusters)
    incident = replace(
        incident,
        clusters=(*incident.clusters, *(c for c in joined if c not in known)),
        recovered=_moved(incident.recovered, [c for c in left if c in watched], joined),
        unwatched=_moved(incident.unwatched, [c for c in left if c not in watched], joined),
        untold=_toggled(incident.untold, [*joined, *left]),
    )
    if _root_unsent(incident):
        return replace(incident, untold=())
    return outbox.owe(_tell(incident, now, tell_every, (*joined, *left)), EffectKind.EDIT)


def _toggled(untold: tuple[str, ...], changed: list[str]) -> tuple[str, ...]:
    """The clusters the thread has not told about after `changed` each joined or left: one
    that changes back before it was told is as the thread last told it."""
    changing, told = set(changed), set(untold)
    kept = [c for c in untold if c not in changing]
    return (*kept, *(c for c in changed if c not in told))


def _moved(names: tuple[str, ...], added: list[str], removed: list[str]) -> tuple[str, ...]:
    gone = set(removed)
    return tuple(c for c in (*names, *added) if c not in gone)


def _root_unsent(incident: AlertState) -> bool:
    """Its root never tried yet: it will list every cluster as it is when it goes out."""
    return not incident.root_ts and any(
        o.kind is EffectKind.ROOT and not o.was_attempted for o in incident.outbox
    )


def _tell(
    incident: AlertState, now: datetime, every: timedelta, changed: Sequence[str]
) -> AlertState:
    """The thread told who joined, in one reply naming them all, and who left (recovered, and
    no longer watched), at most once per `every` each, and all that is left to tell once none
    is firing: a fleet breaking (or recovering) cluster by cluster is a reply or two, not one
    per cluster (a channel posts about one message a second). A cluster that joined and left
    again before it was told is not told at all (the root's list shows it). `changed`: the
    clusters that joined or left just now."""
    if not incident.untold:
        return incident
    firing = set(incident.firing_clusters)
    joined = [c for c in incident.untold if c in firing]
    left = [c for c in incident.untold if c not in firing]
    told: list[str] = []
    if joined and _may_tell(incident.joins_told, now, every):
        since = _since(incident.joins_told, joined, changed)
        incident = replace(incident, joins_told=now)
        incident = _reply(
            incident, Note(NoteKind.JOINED, since or now, until=since and now), joined
        )
        told += joined
    if left and (not firing or _may_tell(incident.leaves_told, now, every)):
        since = _since(incident.leaves_told, left, changed)
        note = Note(NoteKind.RECOVERED, since or now, until=since and now)
        incident = replace(incident, leaves_told=now)
        unwatched = set(incident.unwatched)
        incident = _reply(incident, note, [c for c in left if c not in unwatched])
        gone = [c for c in left if c in unwatched]
        incident = _reply(incident, replace(note, unwatched=True), gone)
        told += left
    done = set(told)
    return replace(incident, untold=tuple(c for c in incident.untold if c not in done))


def _may_tell(last: datetime | None, now: datetime, every: timedelta) -> bool:
    return last is None or now - last >= every


def _since(last: datetime | None, named: Sequence[str], changed: Sequence[str]) -> datetime | None:
    """When the clusters a reply names changed, if not all just now: after the last reply of
    its kind (the reply says "between then and now")."""
    return None if last is None or set(named) <= set(changed) else last


def _reply(incident: AlertState, note: Note, clusters: Sequence[str]) -> AlertState:
    """`incident` owing one reply naming `clusters` (none: nothing)."""
    if not clusters:
        return incident
    return outbox.owe(
        incident, EffectKind.REPLY, replace(note, reason=CLUSTERS_SEPARATOR.join(clusters))
    )


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
