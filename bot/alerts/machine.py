"""The alert state machine: from what a check saw (or a person did) to the next state and effects.

pending (bad, inside `hold`) → firing → acknowledged | silenced → resolved (clear for `hold`).
Firing owes the root, then the diagnosis and what changed before it as the first replies (filled
in by the desk); an alert still firing and unanswered `escalate_after` after it fired owes one
escalation reply.
Every function takes the current `ClusterAlerts` and `now` and returns a `Transition`: the new
state, whose alerts' outboxes now also hold the Slack effects owed (post a root, reply in its
thread, edit the root), and those effects again for the caller to log. The drain sends them in
order (`bot.alerts.drain`); a resolved incident stays in `closing` until it owes nothing.
Pure: no clock, no I/O; raises only `bot.core.errors.UserError` for a refused command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from bot.alerts import outbox
from bot.alerts.model import (
    EVIDENCE_NOTES,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Escalation,
    Note,
    NoteKind,
    Observation,
    Owed,
    Phase,
)
from bot.core import errors
from bot.core.rich import rich_text
from bot.slack.blocks import mention

NO_HOLD = timedelta(0)
COMMANDS_KEPT = 20  # command IDs remembered per alert (a redone write is seconds old)


@dataclass(frozen=True)
class Policy:
    """The timers of docs/design.md §1.4 `alerts`, and where new root messages go; `escalate_after`
    None: never escalate."""

    hold: timedelta
    repeat: timedelta
    failures_before_alert: int
    channel: str
    escalate_after: timedelta | None = None


@dataclass(frozen=True)
class Transition:
    """What one step of the state machine came to: the next state, and the effects it newly
    owes (already in the alerts' outboxes). Not to be confused with what a Slack call came to
    (`bot.alerts.delivery.CallOutcome`) or the record of one write (`delivery.Sent`)."""

    state: ClusterAlerts
    effects: tuple[Owed, ...] = ()


# One step of a stored state document (a check's verdict, a command, a fold into a fleet
# incident): a function of the state as loaded, so a store conflict simply redoes it.
AlertStep = Callable[[ClusterAlerts], Transition]


def observe(
    state: ClusterAlerts, seen: Iterable[Observation], now: datetime, policy: Policy
) -> Transition:
    """A successful check of the cluster saw exactly `seen` bad (everything else is clear).

    Also ends a run of check failures: the "cannot check" alert is clear from now (it resolves
    once checks have kept succeeding for `hold`).
    """
    bad = {o.key: o for o in seen if o.key.cluster == state.cluster}
    step = _CheckPass(replace(state, failures=0, last_error=""), now, policy)
    for key, alert in state.alerts.items():
        step.advance(alert, bad.pop(key, None))
    for observation in bad.values():
        step.advance(AlertState(observation, first_seen=now), observation)
    return step.transition()


def check_failed(
    state: ClusterAlerts, cannot_check: Observation, now: datetime, policy: Policy
) -> Transition:
    """A check could not read the cluster; `cannot_check` describes the error.

    After `failures_before_alert` failures in a row, `cannot_check` fires (no hold: the
    failures were the hold); once firing, any failure keeps it firing, and it resolves only after
    checks succeeded for `hold` (a cool-down), so an intermittent fault is one incident. Other
    alerts neither fire, resolve nor remind during the gap, and a run of clear checks restarts
    after it: nobody saw the condition clear meanwhile.
    """
    failures = state.failures + 1
    step = _CheckPass(
        replace(state, failures=failures, last_error=cannot_check.message), now, policy
    )
    for key, alert in state.alerts.items():
        if key != cannot_check.key:
            step.keep(replace(alert, clear_since=None))
    known = state.alerts.get(cannot_check.key)
    if failures >= policy.failures_before_alert or (known is not None and known.is_active):
        step.advance(known or AlertState(cannot_check, first_seen=now), cannot_check)
    elif known is not None:
        step.keep(known)
    return step.transition()


def acknowledge(
    state: ClusterAlerts, alert_id: str, user: str, now: datetime, *, command: str
) -> Transition:
    """`user` takes the alert: no more reminders for this incident. `command` is the
    configured slash command, named in the error that lists the alerts.

    Raises:
        UserError: no such active alert, or it is already acknowledged.
    """
    alert = find_active(state, alert_id, command=command)
    if alert.acked_by:
        raise errors.UserError(
            rich_text(
                f"Alert {alert.alert_id} is already acknowledged by ", mention(alert.acked_by), "."
            )
        )
    alert = replace(alert, acked_by=user, acked_at=now)
    return _changed(state, alert, Note(NoteKind.ACKNOWLEDGED, now, user))


def silence(
    state: ClusterAlerts,
    alert_id: str,
    user: str,
    duration: timedelta,
    reason: str,
    now: datetime,
    *,
    command: str,
    silence_id: str = "",
) -> Transition:
    """Mute the alert's reminders until `now + duration` (a new silence replaces the old one);
    `silence_id`: the Alertmanager silence that mutes an Alertmanager group's alerts too.

    Raises:
        UserError: no such active alert, or the duration is not positive.
    """
    if duration <= NO_HOLD:
        raise errors.UserError("A silence needs a duration longer than zero, like 1h.")
    alert = find_active(state, alert_id, command=command)
    until = now + duration
    alert = replace(
        alert, silenced_by=user, silenced_until=until, silence_reason=reason, silence_id=silence_id
    )
    return _changed(state, alert, Note(NoteKind.SILENCED, now, user, reason, until))


def unsilence(
    state: ClusterAlerts, alert_id: str, user: str, now: datetime, *, command: str
) -> Transition:
    """End the alert's silence early.

    Raises:
        UserError: no such active alert, or it is not silenced.
    """
    alert = find_active(state, alert_id, command=command)
    if alert.silenced_until is None:
        raise errors.UserError(f"Alert {alert.alert_id} is not silenced.")
    note = Note(NoteKind.UNSILENCED, now, user, still_bad=alert.clear_since is None)
    return _changed(state, _unsilenced(alert, now), note)


def applied_once(
    state: ClusterAlerts, alert_id: str, command_id: str, step: AlertStep
) -> Transition:
    """`step` (an acknowledgement, a silence, ...) applied unless the command `command_id`
    already was: a store write that was applied but answered with an error is redone after
    reading the state again, and must then change nothing."""
    alert = state.find(alert_id)
    if alert is not None and command_id in alert.commands:
        return Transition(state)
    stepped = step(state)
    changed = stepped.state.find(alert_id)
    if changed is None:
        return stepped
    commands = (*changed.commands, command_id)[-COMMANDS_KEPT:]
    return Transition(
        stepped.state.with_alert(replace(changed, commands=commands)), stepped.effects
    )


def find_active(state: ClusterAlerts, alert_id: str, *, command: str) -> AlertState:
    """The firing, acknowledged or silenced alert with that ID (`command`: the configured slash
    command, which the error names).

    Raises:
        UserError: none has it (unknown, resolved, or still pending inside `hold`).
    """
    alert = state.find(alert_id)
    if alert is None:
        raise errors.UserError(
            f"No active alert {alert_id!r} on {state.cluster}; `{command} alerts` lists them."
        )
    if not alert.is_active:
        raise errors.UserError(
            f"Alert {alert.alert_id} has not fired yet (its condition must hold first)."
        )
    return alert


def owe_evidence(alert: AlertState, now: datetime) -> AlertState:
    """`alert` owing its diagnosis, then its "what changed in the hour before", both empty
    until the holder gathers them (`bot.alerts.model.EVIDENCE_NOTES`, in that order)."""
    for kind in EVIDENCE_NOTES:
        alert = outbox.owe(alert, EffectKind.REPLY, Note(kind, now))
    return alert


def resolve(state: ClusterAlerts, alert: AlertState, now: datetime) -> Transition:
    """`alert` resolved at `now` whatever its hold (its source said so: an Alertmanager group
    notified `resolved`): the reply, the root's edit, the sweep; it waits in `closing`."""
    step = _CheckPass(state, now, Policy(NO_HOLD, NO_HOLD, 1, alert.root_channel))
    step.resolve(replace(alert, clear_since=alert.clear_since or now))
    return step.transition()


def _changed(state: ClusterAlerts, alert: AlertState, note: Note) -> Transition:
    alert, owed = _in_thread(alert, note)
    return Transition(state.with_alert(alert), owed)


def _in_thread(alert: AlertState, note: Note) -> tuple[AlertState, tuple[Owed, ...]]:
    """The alert owing a reply and an edit of its root (queued behind the root if that is still
    owed: the thread starts once the root is in Slack)."""
    alert = outbox.owe(outbox.owe(alert, EffectKind.REPLY, note), EffectKind.EDIT)
    return alert, alert.outbox[-2:]  # the reply, then the edit


def _unsilenced(alert: AlertState, now: datetime) -> AlertState:
    # Reminders count again from now: the silence was the last thing said in the thread.
    return replace(
        alert,
        silenced_by="",
        silenced_until=None,
        silence_reason="",
        silence_id="",
        last_reminder=now,
    )


@dataclass
class _CheckPass:
    """The state being built by one check (or one failed check), and the effects in the order
    they must happen (the reminders' own pass is `bot.alerts.reminders._ReminderPass`)."""

    state: ClusterAlerts
    now: datetime
    policy: Policy
    effects: list[Owed] = field(default_factory=list)

    def transition(self) -> Transition:
        return Transition(self.state, tuple(self.effects))

    def keep(self, alert: AlertState) -> None:
        self.state = self.state.with_alert(alert)

    def advance(self, alert: AlertState, seen: Observation | None) -> None:
        """One alert after a check that saw its condition bad (`seen`) or clear (None).

        An `immediate` alert fires without hold (its failures were the hold), a `waited_out` one
        too (its wait was), but each resolves, like every alert, only after it has been clear
        for `hold`.
        """
        latest = seen or alert.observation
        fire_hold = NO_HOLD if latest.immediate or latest.waited_out else self.policy.hold
        if seen is not None:
            alert = replace(alert, observation=seen, clear_since=None)
        if alert.fleet:  # followed in a fleet incident (`bot.alerts.fleet`): no thread here
            self._advance_member(alert, bad=seen is not None)
            return
        if alert.phase is Phase.PENDING:
            self._advance_pending(alert, seen is not None, fire_hold)
            return
        alert = self._expire_silence(alert, still_bad=seen is not None)
        if seen is None:
            clear_since = alert.clear_since or self.now
            alert = replace(alert, clear_since=clear_since)
            if self.now - clear_since >= self.policy.hold:
                self.resolve(alert)
                return
        self.keep(self._ensure_root(self._remind(self._escalate(alert))))

    def _advance_member(self, alert: AlertState, *, bad: bool) -> None:
        """A cluster's alert grouped into a fleet incident: it still fires and resolves after
        `hold` like any other, but says nothing itself; the fleet incident tells its thread."""
        if bad:
            self.keep(alert)
            return
        clear_since = alert.clear_since or self.now
        if self.now - clear_since >= self.policy.hold:
            self.state = self.state.without(alert.key)
        else:
            self.keep(replace(alert, clear_since=clear_since))

    def _advance_pending(self, alert: AlertState, bad: bool, hold: timedelta) -> None:
        if not bad:
            self.state = self.state.without(alert.key)  # a flap inside hold: never seen
        elif self.now - alert.first_seen >= hold:
            fired = replace(alert, firing_since=self.now, root_channel=self.policy.channel)
            self.keep(self._owe_diagnosis(self._ensure_root(fired)))
        else:
            self.keep(alert)

    def _ensure_root(self, alert: AlertState) -> AlertState:
        """Owe the root once per incident; the outbox keeps it until Slack confirmed it."""
        if alert.has_thread or any(o.kind is EffectKind.ROOT for o in alert.outbox):
            return alert
        alert = outbox.owe(alert, EffectKind.ROOT)
        self.effects.append(alert.outbox[-1])
        return alert

    def _owe_diagnosis(self, alert: AlertState) -> AlertState:
        """The first replies of a new incident, owed empty (the holder gathers them,
        `bot.alerts.usecase_evidence`): the failing component's diagnosis, then what changed
        in the hour before. An immediate alert (the cluster cannot be checked) has neither:
        the cluster itself does not answer."""
        if alert.observation.immediate:
            return alert
        owed = owe_evidence(alert, self.now)
        self.effects.extend(owed.outbox[len(alert.outbox) :])
        return owed

    def _expire_silence(self, alert: AlertState, *, still_bad: bool) -> AlertState:
        until = alert.silenced_until
        if until is None or self.now < until:
            return alert
        note = Note(NoteKind.SILENCE_EXPIRED, until, alert.silenced_by, still_bad=still_bad)
        alert, owed = _in_thread(_unsilenced(alert, self.now), note)
        self.effects.extend(owed)
        return alert

    def _escalate(self, alert: AlertState) -> AlertState:
        """Decided once, at the first check `escalate_after` after the alert fired (not while
        its condition is clearing): still firing, neither acknowledged nor silenced → one reply
        mentioning `escalate_to` (it also counts as the reminder); otherwise never."""
        after, since = self.policy.escalate_after, alert.firing_since
        if after is None or since is None or alert.escalation is not Escalation.PENDING:
            return alert
        if alert.clear_since is not None or self.now - since < after:
            return alert
        if alert.phase is not Phase.FIRING:
            return replace(alert, escalation=Escalation.SPARED)
        alert = replace(alert, escalation=Escalation.OWED, last_reminder=self.now)
        alert = outbox.owe(alert, EffectKind.REPLY, Note(NoteKind.ESCALATED, self.now))
        self.effects.append(alert.outbox[-1])
        return alert

    def _remind(self, alert: AlertState) -> AlertState:
        if alert.phase is not Phase.FIRING or not alert.has_thread or alert.clear_since:
            return alert
        last = alert.last_reminder or alert.firing_since or self.now
        if self.now - last < self.policy.repeat:
            return alert
        alert = replace(alert, last_reminder=self.now)
        alert = outbox.owe(alert, EffectKind.REPLY, Note(NoteKind.REMINDER, self.now))
        self.effects.append(alert.outbox[-1])
        return alert

    def resolve(self, alert: AlertState) -> None:
        """The incident leaves the live alerts; it stays in `closing` until it owes nothing."""
        resolved = replace(alert, resolved_at=self.now)
        resolved, owed = _in_thread(resolved, Note(NoteKind.RESOLVED, self.now))
        resolved = outbox.owe(resolved, EffectKind.SWEEP)
        self.effects.extend(owed)
        closing = (*self.state.closing, resolved)
        self.state = replace(self.state.without(alert.key), closing=closing)
