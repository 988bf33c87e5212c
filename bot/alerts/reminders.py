"""Reminders of forgotten pauses and suspends (docs/design.md §2 "Reminders"), as alert incidents.

A pause or suspend without an end, made through the bot or by hand, is reminded of once it is
`changes.remind_after` old, then again every `remind_after` until it ends. Each change is one
incident of the alert outbox (`ClusterAlerts.reminders`, apart from the alerts), so it has the
alerts' delivery guarantees: the root is the first reminder, later reminders are replies in its
thread, and its end is a last reply plus an edit of the root. How old it is counts from our
record's time; one made by hand from when kai-chatops first saw it (the incident's `first_seen`,
stored while it waits). The rules here are pure: no clock, no I/O.

A reminder's key is (cluster, kind, `namespace/name`, "paused|suspended without an end"); its
observation carries how it is held (`title`), why (`reason`), who (`by`, "" by hand) and since
when (`since`, None by hand). The same object held again with another record is another change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from bot.alerts import outbox
from bot.alerts.machine import Transition
from bot.alerts.model import (
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
from bot.core.conditions import parse_timestamp
from bot.rules.held import HeldObject, KindScope, covers

OFF = timedelta(0)
FirstSeen = dict[tuple[str, str, str, str], datetime]


@dataclass(frozen=True)
class ReminderPolicy:
    """`changes.remind_after` (0: off) and the alert channel the roots go to."""

    remind_after: timedelta
    channel: str


def is_due(since: datetime, now: datetime, remind_after: timedelta) -> bool:
    """Whether something said (or begun) at `since` is owed a reminder at `now`: at
    `remind_after` exactly, not a moment before; never when reminders are off."""
    return remind_after > OFF and now - since >= remind_after


def key_of(held: HeldObject) -> AlertKey:
    """The reminder's identity: the object and whether it is paused or suspended."""
    where = f"{held.namespace}/{held.name}"
    return AlertKey(held.cluster, held.kind, where, f"{held.what} without an end")


def observation_of(held: HeldObject) -> Observation:
    """What a reminder says of `held`: how, why, who and since when (our record's time)."""
    since = parse_timestamp(held.at) if held.by else None
    title = f"{held.what} ({held.how})" if held.how else held.what
    return Observation(key_of(held), Severity.WARNING, title, held.reason, since=since, by=held.by)


def since_of(alert: AlertState) -> datetime:
    """Since when the change is in force: our record's time, else when it was first seen."""
    return alert.observation.since or alert.first_seen


def remind(
    state: ClusterAlerts,
    held: Iterable[HeldObject],
    places: Sequence[KindScope],
    now: datetime,
    policy: ReminderPolicy,
) -> Transition:
    """One sweep saw exactly `held` in `places` (each listed in full): reminders fall due, and
    the changes in those places no longer held end (elsewhere nothing was seen either way).
    A timed pause or suspend ends by itself and is never reminded of."""
    seen = _in_force(state, held, places)
    step = _ReminderPass(state, now, policy)
    for key, alert in state.reminders.items():
        namespace = key.object.partition("/")[0]
        if key not in seen and covers(places, key.kind, namespace):
            step.end(alert)
    for key, observation in seen.items():
        step.advance(state.reminders.get(key), observation)
    return step.transition()


def next_due(
    state: ClusterAlerts,
    held: Iterable[HeldObject],
    places: Sequence[KindScope],
    remind_after: timedelta,
) -> datetime | None:
    """When the next reminder of `state` (just stepped by `remind` with the same `held`) falls
    due, so the sweep comes back then, as a hold does, not at its next turn: a first reminder
    `remind_after` after our record's time (or after the change was first seen), a later one
    `remind_after` after the last. One whose root is not in Slack yet has no reply due (its
    root is what is owed). None when reminders are off or nothing is in force."""
    if remind_after <= OFF:
        return None
    moments = []
    for key, seen in _in_force(state, held, places).items():
        alert = state.reminders.get(key)
        if alert is None and seen.since is not None:
            moments.append(seen.since + remind_after)
        elif alert is not None and alert.firing_since is None:
            moments.append(since_of(alert) + remind_after)
        elif alert is not None and alert.has_thread:
            moments.append((alert.last_reminder or since_of(alert)) + remind_after)
    return min(moments, default=None)


def _in_force(
    state: ClusterAlerts, held: Iterable[HeldObject], places: Sequence[KindScope]
) -> dict[AlertKey, Observation]:
    """The changes without an end a sweep of `places` saw on `state`'s cluster."""
    return {
        key_of(h): observation_of(h)
        for h in held
        if h.cluster == state.cluster and not h.is_timed and covers(places, h.kind, h.namespace)
    }


def first_seen_by_hand(states: Iterable[ClusterAlerts]) -> FirstSeen:
    """(cluster, kind, namespace, name) -> when kai-chatops first saw each change made by hand
    that it keeps a reminder of (`/kai changes` shows it as "first seen")."""
    found: FirstSeen = {}
    for state in states:
        for key, alert in state.reminders.items():
            if not alert.observation.by:
                namespace, _, name = key.object.partition("/")
                found[(key.cluster, key.kind, namespace, name)] = alert.first_seen
    return found


def _is_same_change(a: Observation, b: Observation) -> bool:
    """The same record (who and when); two reads of one change made by hand are the same."""
    return (a.by, a.since) == (b.by, b.since)


@dataclass
class _ReminderPass:
    """The state being built by one sweep's look at the held changes, and the effects it owes
    in order (the alerts' check builds its own: `bot.alerts.machine._CheckPass`)."""

    state: ClusterAlerts
    now: datetime
    policy: ReminderPolicy
    effects: list[Owed] = field(default_factory=list)

    def transition(self) -> Transition:
        return Transition(self.state, tuple(self.effects))

    def advance(self, known: AlertState | None, seen: Observation) -> None:
        """A change still in force: its first reminder (the root) once it is old enough, then a
        reply every `remind_after` after the last one, once the root is in Slack."""
        if known is not None and not _is_same_change(known.observation, seen):
            self.end(known)
            known = None
        alert = AlertState(seen, first_seen=self.now) if known is None else known
        alert = replace(alert, observation=seen)
        after = self.policy.remind_after
        if alert.firing_since is None:
            if not is_due(since_of(alert), self.now, after):
                # Kept only to remember when a change made by hand was first seen: ours has
                # its time on the object, so the state stays small.
                self.state = (
                    self.state.without(alert.key) if seen.since else self.state.with_alert(alert)
                )
                return
            alert = replace(
                alert,
                firing_since=self.now,
                last_reminder=self.now,
                root_channel=self.policy.channel,
            )
            alert = self._owe(alert, EffectKind.ROOT)
        elif alert.has_thread and is_due(alert.last_reminder or self.now, self.now, after):
            alert = replace(alert, last_reminder=self.now)
            alert = self._owe(alert, EffectKind.REPLY, Note(NoteKind.REMINDER, self.now))
        self.state = self.state.with_alert(alert)

    def end(self, alert: AlertState) -> None:
        """The change is no longer in force: forgotten if it was never reminded of; else a last
        reply and the root edited to say it ended, then the incident closes like an alert's."""
        self.state = self.state.without(alert.key)
        if alert.firing_since is None:
            return
        ended = replace(alert, resolved_at=self.now)
        ended = self._owe(ended, EffectKind.REPLY, Note(NoteKind.RESOLVED, self.now))
        ended = self._owe(self._owe(ended, EffectKind.EDIT), EffectKind.SWEEP)
        self.state = replace(self.state, closing=(*self.state.closing, ended))

    def _owe(self, alert: AlertState, kind: EffectKind, note: Note | None = None) -> AlertState:
        alert = outbox.owe(alert, kind, note)
        if kind is not EffectKind.SWEEP:
            self.effects.append(alert.outbox[-1])
        return alert
