"""Alertmanager's notification groups as incidents: the pure step of their state document.

Each group (its `groupKey`) is one incident in the document `ALERTMANAGER`, in the same
lifecycle, outbox and delivery as the bot's own alerts (docs/alertmanager.md). A notification is
compared with what the incident already told: its first firing owes the root (and, when its
labels name a KAI or KEDA component, the diagnosis as the first reply and what changed on that
cluster in the hour before as the second); alerts that join or
resolve later owe one reply each way and an edit of the root; `status: resolved` (or no alert
left firing) resolves it. A notification that tells nothing new owes nothing, so Alertmanager's
retries, its `repeat_interval` and a second Alertmanager of an HA pair post nothing twice; a
late firing copy of a group already resolved (every alert of it told resolved) opens nothing.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from bot.alerts import machine, outbox
from bot.alerts.machine import Transition
from bot.alerts.model import (
    ALERTMANAGER,
    AlertKey,
    AlertState,
    ClusterAlerts,
    EffectKind,
    Note,
    NoteKind,
    Observation,
    Severity,
)
from bot.integrations.alertmanager_webhook import Alert, Notification

KIND = "Alertmanager group"
LINE_SEPARATOR = "\n"  # between the alerts a joined or resolved reply names
MEMBERS_KEPT = 200  # alerts of one group remembered: a group of thousands must fit its budget
_LINE_CHARS = 300  # of one alert's line in the root's message


def group_key(notification: Notification) -> AlertKey:
    """The incident's identity: the group's key (its route and group labels), shown by its
    group labels."""
    shown = ", ".join(f"{k}={v}" for k, v in sorted(notification.group_labels.items()))
    return AlertKey(ALERTMANAGER, KIND, shown or "(all alerts)", notification.group_key)


def receive(
    state: ClusterAlerts,
    notification: Notification,
    now: datetime,
    channel: str,
    diagnosable: bool,
) -> Transition:
    """The document after one notification (see the module's docstring). `channel`: where a
    new root goes; `diagnosable`: the group's labels name a KAI or KEDA component."""
    key = group_key(notification)
    alert = state.alerts.get(key)
    firing = notification.firing
    if notification.status == "resolved" or not firing:
        if alert is None or not alert.is_active:
            return Transition(state)
        return _resolved(state, alert, notification, now)
    if alert is None or not alert.is_active:
        if _told_already(state, key, firing):
            return Transition(state)
        return _opened(state, notification, now, channel, diagnosable)
    return _changed(state, alert, notification, now)


def _opened(
    state: ClusterAlerts, notification: Notification, now: datetime, channel: str, diagnose: bool
) -> Transition:
    alert = AlertState(
        _observation(notification),
        first_seen=now,
        firing_since=now,
        root_channel=channel,
        members=_tokens(notification.firing)[:MEMBERS_KEPT],
        labels=tuple(f"{k}={v}" for k, v in sorted(notification.common_labels.items())),
    )
    alert = outbox.owe(alert, EffectKind.ROOT)
    if diagnose:  # its diagnosis, then what changed on that cluster in the hour before
        alert = machine.owe_evidence(alert, now)
    return Transition(state.with_alert(alert), alert.outbox)


def _changed(
    state: ClusterAlerts, alert: AlertState, notification: Notification, now: datetime
) -> Transition:
    """Alerts that joined the group, and those that resolved: told resolved, or gone from it,
    unless Alertmanager left alerts out (`truncatedAlerts`, its `max_alerts`): then an alert
    missing may still fire, and only one told resolved is."""
    firing = notification.firing
    joined = [a for a in firing if a.token not in alert.members]
    tokens = _tokens(firing)
    told = {a.token for a in notification.alerts}
    missing = [t for t in alert.members if t not in tokens]
    left = [t for t in missing if t in told or not notification.truncated]
    if not joined and not left:
        return Transition(state)
    owed_before = alert.outbox
    kept = (*tokens, *(t for t in missing if t not in left))[:MEMBERS_KEPT]
    alert = replace(alert, observation=_observation(notification), members=kept)
    if joined:
        note = Note(NoteKind.JOINED, now, reason=_lines(joined))
        alert = outbox.owe(alert, EffectKind.REPLY, note)
    if left:
        note = Note(NoteKind.RECOVERED, now, reason=_lines(_gone(notification, left)))
        alert = outbox.owe(alert, EffectKind.REPLY, note)
    alert = outbox.owe(alert, EffectKind.EDIT)
    return Transition(
        state.with_alert(alert), tuple(o for o in alert.outbox if o not in owed_before)
    )


def _resolved(
    state: ClusterAlerts, alert: AlertState, notification: Notification, now: datetime
) -> Transition:
    # The root keeps showing the alerts that fired; the members, every alert told resolved.
    resolved = [a.token for a in notification.alerts]
    members = tuple(dict.fromkeys((*alert.members, *resolved)))[-MEMBERS_KEPT:]
    alert = replace(alert, members=members)
    return machine.resolve(state, alert, now)


def _told_already(state: ClusterAlerts, key: AlertKey, firing: Sequence[Alert]) -> bool:
    """Every firing alert was part of an incident of this group that resolved already: a copy
    sent before the resolution and delivered after it (a retry, the other Alertmanager)."""
    closed = [a for a in (*state.closing, *state.recent) if a.key == key]
    told = {t for a in closed for t in a.members}
    return bool(closed) and all(a.token in told for a in firing)


def _observation(notification: Notification) -> Observation:
    """What the root shows: the group's summary, severity, and one line per firing alert."""
    common = notification.common_labels
    annotations = notification.common_annotations
    firing = notification.firing
    title = annotations.get("summary") or common.get("alertname") or "Alertmanager alerts"
    message = LINE_SEPARATOR.join(_line(a) for a in firing)
    if notification.truncated:
        message += f"{LINE_SEPARATOR}(and {notification.truncated} more Alertmanager left out)"
    return Observation(
        key=group_key(notification),
        severity=_severity(common, firing),
        title=title,
        reason=annotations.get("description", ""),
        message=message,
        since=min(a.starts_at for a in firing),
    )


def _severity(common: Mapping[str, str], alerts: Sequence[Alert]) -> Severity:
    """Critical when the group's (or any alert's) `severity` label says so."""
    levels = {common.get("severity", "")} | {a.labels.get("severity", "") for a in alerts}
    return Severity.CRITICAL if "critical" in levels else Severity.WARNING


def _line(alert: Alert) -> str:
    """`alertname (pod=x, ...): summary: description` of one alert, cut to a line."""
    labels = ", ".join(f"{k}={v}" for k, v in sorted(alert.labels.items()) if k != "alertname")
    words = [alert.annotations.get(k, "") for k in ("summary", "description")]
    said = ": ".join(w for w in words if w)
    line = f"{alert.name} ({labels})" if labels else alert.name
    line = f"{line}: {said}" if said else line
    return " ".join(line.split())[:_LINE_CHARS]


def _lines(alerts: Sequence[Alert]) -> str:
    return LINE_SEPARATOR.join(_line(a) for a in alerts)


def _gone(notification: Notification, tokens: Sequence[str]) -> list[Alert]:
    """The alerts of `tokens` as this notification tells them resolved, or by fingerprint only
    when it no longer carries them (Alertmanager flushed them)."""
    carried = {a.token: a for a in notification.alerts}
    return [carried.get(t) or _unnamed(t) for t in tokens]


def _unnamed(token: str) -> Alert:
    fingerprint, _, _ = token.partition("@")
    return Alert("resolved", {}, {}, datetime.min, fingerprint)


def _tokens(alerts: Sequence[Alert]) -> tuple[str, ...]:
    return tuple(a.token for a in alerts)
