"""The alert state machine: from what a check saw (or a person did) to the next state and effects.

pending (bad, inside `hold`) → firing → acknowledged | silenced → resolved (clear for `hold`).
Every function takes the current `ClusterAlerts` and `now` and returns an `Outcome`: the new
state and the effects (post a root, reply in its thread, edit the root) an I/O layer carries
out in order. Pure: no clock, no I/O; raises only `bot.core.errors.UserError` for a refused command.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from bot.alerts.model import AlertKey, AlertState, ClusterAlerts, Observation, Phase, RootStatus
from bot.core import errors
from bot.slack.blocks import mention

NO_HOLD = timedelta(0)


@dataclass(frozen=True)
class Policy:
    """The timers of DESIGN 1.4 `alerts`, and where new root messages go."""

    hold: timedelta
    repeat: timedelta
    failures_before_alert: int
    channel: str


class NoteKind(enum.Enum):
    REMINDER = "reminder"
    ACKNOWLEDGED = "acknowledged"
    SILENCED = "silenced"
    UNSILENCED = "unsilenced"
    SILENCE_EXPIRED = "silence expired"
    RESOLVED = "resolved"


@dataclass(frozen=True)
class Note:
    """What a thread reply says: who, when, why; `still_bad` after a silence ends."""

    kind: NoteKind
    at: datetime
    user: str = ""
    reason: str = ""
    until: datetime | None = None
    still_bad: bool = True


@dataclass(frozen=True)
class PostRoot:
    """Post the alert's root message, then record its ts (`root_posted`) or failure."""

    alert: AlertState


@dataclass(frozen=True)
class PostReply:
    """Reply in the alert's thread."""

    alert: AlertState
    note: Note


@dataclass(frozen=True)
class EditRoot:
    """Replace the root message with one showing the alert's current state."""

    alert: AlertState


Effect = PostRoot | PostReply | EditRoot


@dataclass(frozen=True)
class Outcome:
    state: ClusterAlerts
    effects: tuple[Effect, ...] = ()


def observe(
    state: ClusterAlerts, seen: Iterable[Observation], now: datetime, policy: Policy
) -> Outcome:
    """A successful check of the cluster saw exactly `seen` bad (everything else is clear).

    Also ends a run of check failures, which resolves the "cannot check" alert at once.
    """
    bad = {o.key: o for o in seen if o.key.cluster == state.cluster}
    step = _Step(replace(state, failures=0, last_error=""), now, policy)
    for key, alert in state.alerts.items():
        step.advance(alert, bad.pop(key, None))
    for observation in bad.values():
        step.advance(AlertState(observation, first_seen=now), observation)
    return step.outcome()


def check_failed(
    state: ClusterAlerts, cannot_check: Observation, now: datetime, policy: Policy
) -> Outcome:
    """A check could not read the cluster; `cannot_check` describes the error.

    After `failures_before_alert` failures in a row, `cannot_check` fires (no hold: the
    failures were the hold). Other alerts neither fire, resolve nor remind during the gap, and a
    run of clear checks restarts after it: nobody saw the condition clear meanwhile.
    """
    failures = state.failures + 1
    step = _Step(replace(state, failures=failures, last_error=cannot_check.message), now, policy)
    for key, alert in state.alerts.items():
        if key != cannot_check.key:
            step.keep(replace(alert, clear_since=None))
    if failures >= policy.failures_before_alert:
        known = state.alerts.get(cannot_check.key) or AlertState(cannot_check, first_seen=now)
        step.advance(known, cannot_check)
    return step.outcome()


def acknowledge(state: ClusterAlerts, alert_id: str, user: str, now: datetime) -> Outcome:
    """`user` takes the alert: no more reminders for this incident.

    Raises:
        UserError: no such active alert, or it is already acknowledged.
    """
    alert = find_active(state, alert_id)
    if alert.acked_by:
        raise errors.UserError(
            f"Alert {alert.alert_id} is already acknowledged by {mention(alert.acked_by)}."
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
) -> Outcome:
    """Mute the alert's reminders until `now + duration` (a new silence replaces the old one).

    Raises:
        UserError: no such active alert, or the duration is not positive.
    """
    if duration <= NO_HOLD:
        raise errors.UserError("A silence needs a duration longer than zero, like 1h.")
    alert = find_active(state, alert_id)
    until = now + duration
    alert = replace(alert, silenced_by=user, silenced_until=until, silence_reason=reason)
    return _changed(state, alert, Note(NoteKind.SILENCED, now, user, reason, until))


def unsilence(state: ClusterAlerts, alert_id: str, user: str, now: datetime) -> Outcome:
    """End the alert's silence early.

    Raises:
        UserError: no such active alert, or it is not silenced.
    """
    alert = find_active(state, alert_id)
    if alert.silenced_until is None:
        raise errors.UserError(f"Alert {alert.alert_id} is not silenced.")
    note = Note(NoteKind.UNSILENCED, now, user, still_bad=alert.clear_since is None)
    return _changed(state, _unsilenced(alert, now), note)


def root_posted(state: ClusterAlerts, key: AlertKey, channel: str, ts: str) -> ClusterAlerts:
    """The root message of `key` is in Slack at `ts`: its thread is where the rest goes."""
    alert = state.alerts.get(key)
    if alert is None:
        return state
    return state.with_alert(
        replace(alert, root_status=RootStatus.POSTED, root_channel=channel, root_ts=ts)
    )


def root_failed(state: ClusterAlerts, key: AlertKey) -> ClusterAlerts:
    """Posting the root of `key` failed for sure: the next check tries again."""
    alert = state.alerts.get(key)
    if alert is None or alert.root_status is not RootStatus.POSTING:
        return state
    return state.with_alert(replace(alert, root_status=RootStatus.NONE))


def find_active(state: ClusterAlerts, alert_id: str) -> AlertState:
    """The firing, acknowledged or silenced alert with that ID.

    Raises:
        UserError: none has it (unknown, resolved, or still pending inside `hold`).
    """
    alert = state.find(alert_id)
    if alert is None:
        raise errors.UserError(
            f"No active alert {alert_id!r} on {state.cluster}; `/kai alerts` lists them."
        )
    if not alert.is_active:
        raise errors.UserError(
            f"Alert {alert.alert_id} has not fired yet (its condition must hold first)."
        )
    return alert


def _changed(state: ClusterAlerts, alert: AlertState, note: Note) -> Outcome:
    return Outcome(state.with_alert(alert), _in_thread(alert, note))


def _in_thread(alert: AlertState, note: Note) -> tuple[Effect, ...]:
    """The reply and the edited root; nothing until the root is posted (it shows the state)."""
    if not alert.has_thread:
        return ()
    return (PostReply(alert, note), EditRoot(alert))


def _unsilenced(alert: AlertState, now: datetime) -> AlertState:
    # Reminders count again from now: the silence was the last thing said in the thread.
    return replace(alert, silenced_by="", silenced_until=None, silence_reason="", last_reminder=now)


@dataclass
class _Step:
    """The state being built by one check, and the effects in the order they must happen."""

    state: ClusterAlerts
    now: datetime
    policy: Policy
    effects: list[Effect] = field(default_factory=list)

    def outcome(self) -> Outcome:
        return Outcome(self.state, tuple(self.effects))

    def keep(self, alert: AlertState) -> None:
        self.state = self.state.with_alert(alert)

    def advance(self, alert: AlertState, seen: Observation | None) -> None:
        """One alert after a check that saw its condition bad (`seen`) or clear (None)."""
        immediate = (seen or alert.observation).immediate
        hold = NO_HOLD if immediate else self.policy.hold
        if seen is not None:
            alert = replace(alert, observation=seen, clear_since=None)
        if alert.phase is Phase.PENDING:
            self._advance_pending(alert, seen is not None, hold)
            return
        alert = self._expire_silence(alert, still_bad=seen is not None)
        if seen is None:
            clear_since = alert.clear_since or self.now
            alert = replace(alert, clear_since=clear_since)
            if self.now - clear_since >= hold:
                self._resolve(alert)
                return
        self.keep(self._ensure_root(self._remind(alert)))

    def _advance_pending(self, alert: AlertState, bad: bool, hold: timedelta) -> None:
        if not bad:
            self.state = self.state.without(alert.key)  # a flap inside hold: never seen
        elif self.now - alert.first_seen >= hold:
            fired = replace(alert, firing_since=self.now, root_channel=self.policy.channel)
            self.keep(self._ensure_root(fired))
        else:
            self.keep(alert)

    def _ensure_root(self, alert: AlertState) -> AlertState:
        """Post the root if it is not in Slack: first firing, a failed post, or a crash mid-post.

        A root still POSTING when a step starts was being posted by a process that died before
        it saved the ts; it may or may not be in Slack, so it is posted again saying so.
        """
        if alert.root_status is RootStatus.POSTED:
            return alert
        reposted = alert.reposted or alert.root_status is RootStatus.POSTING
        alert = replace(alert, root_status=RootStatus.POSTING, reposted=reposted)
        self.effects.append(PostRoot(alert))
        return alert

    def _expire_silence(self, alert: AlertState, *, still_bad: bool) -> AlertState:
        until = alert.silenced_until
        if until is None or self.now < until:
            return alert
        note = Note(NoteKind.SILENCE_EXPIRED, until, alert.silenced_by, still_bad=still_bad)
        alert = _unsilenced(alert, self.now)
        self.effects.extend(_in_thread(alert, note))
        return alert

    def _remind(self, alert: AlertState) -> AlertState:
        if alert.phase is not Phase.FIRING or not alert.has_thread or alert.clear_since:
            return alert
        last = alert.last_reminder or alert.firing_since or self.now
        if self.now - last < self.policy.repeat:
            return alert
        alert = replace(alert, last_reminder=self.now)
        self.effects.append(PostReply(alert, Note(NoteKind.REMINDER, self.now)))
        return alert

    def _resolve(self, alert: AlertState) -> None:
        self.state = self.state.without(alert.key)
        resolved = replace(alert, resolved_at=self.now)
        self.effects.extend(_in_thread(resolved, Note(NoteKind.RESOLVED, self.now)))
