"""What kai-chatops itself recorded: the changes made through it (the change journal: who,
what, why, approved by), the alerts it fired and resolved (the alert state), and one
incident's own story (fired, paged, its replies as its thread told them, resolved). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from bot.alerts.model import AlertState, ClusterAlerts, Note, NoteKind, Severity
from bot.alerts.outbox import RECENT_KEPT
from bot.timeline.model import ALERT, BOT, Entry, Reach, within

SLACK_USER = "slack:"  # how a change made as the person names them (`bot.gitops.change`)


class Change(Protocol):
    """A change as the journal keeps it (`bot.access.audit.Change`)."""

    @property
    def user(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def at(self) -> datetime: ...
    @property
    def reason(self) -> str: ...
    @property
    def details(self) -> Mapping[str, str]: ...
    @property
    def note(self) -> str: ...


def journal_entries(
    changes: Iterable[Change], cluster: str, start: datetime, end: datetime
) -> list[Entry]:
    """The changes made through the bot on `cluster` within the window (its target ends
    "on CLUSTER", as every change kind describes it)."""
    suffix = f" on {cluster}"
    entries = []
    for change in changes:
        if not change.target.endswith(suffix) or not within(change.at, start, end):
            continue
        what = f"{change.action} ({change.outcome})"
        what += f": {change.note}" if change.note and change.outcome != "ok" else ""
        entries.append(
            Entry(
                change.at,
                BOT,
                change.target.removesuffix(suffix),
                what,
                who=change.user.removeprefix(SLACK_USER),
                why=change.reason,
                approved_by=change.details.get("approved_by", ""),
            )
        )
    return entries


def journal_reach(changes: Sequence[Change], kept: int, start: datetime) -> list[Reach]:
    """Said when the journal holds all it keeps (`kept`) and its oldest entry is after the
    window's start."""
    if len(changes) < kept:
        return []
    oldest = min(change.at for change in changes)
    if oldest <= start:
        return []
    note = f"it keeps the last {kept} changes made through kai-chatops"
    return [Reach("The change journal", oldest, note)]


def incidents_of(state: ClusterAlerts) -> list[AlertState]:
    """Every incident the state remembers: live, closing, recently closed."""
    return [*state.alerts.values(), *state.closing, *state.recent]


def alert_entries(state: ClusterAlerts, start: datetime, end: datetime) -> list[Entry]:
    """Alerts of the cluster that fired or resolved within the window."""
    entries = []
    for alert in incidents_of(state):
        subject = f"Alert {alert.alert_id}"
        title = alert.observation.title
        if within(alert.firing_since, start, end) and alert.firing_since is not None:
            severity = alert.observation.severity.value
            entries.append(
                Entry(alert.firing_since, ALERT, subject, f"fired ({severity}): {title}")
            )
        if within(alert.resolved_at, start, end) and alert.resolved_at is not None:
            entries.append(Entry(alert.resolved_at, ALERT, subject, f"resolved: {title}"))
    return entries


def alerts_reach(state: ClusterAlerts, start: datetime) -> list[Reach]:
    """Said when the state's memory of closed incidents is full and begins after the start."""
    if len(state.recent) < RECENT_KEPT:
        return []
    oldest = min(a.resolved_at or a.first_seen for a in state.recent)
    if oldest <= start:
        return []
    note = f"the alert state keeps the last {RECENT_KEPT} closed incidents of each cluster"
    return [Reach("Alerts", oldest, note)]


def find_incident(
    states: Iterable[ClusterAlerts], alert_id: str, cluster: str | None = None
) -> AlertState | None:
    """The newest incident (live, closing or recently closed) of the alert with that ID that
    fired (a pending one has no thread and nothing to tell), on `cluster` when one is named
    (a fleet incident: among its clusters)."""
    found = [
        a
        for state in states
        for a in incidents_of(state)
        if a.alert_id == alert_id
        and a.firing_since is not None
        and (cluster is None or cluster in (a.key.cluster, *a.clusters))
    ]
    return max(found, key=lambda a: a.first_seen, default=None)


def incident_entries(alert: AlertState, mentioned: Sequence[str]) -> list[Entry]:
    """One incident's own story: when its condition was first seen, when it fired and was
    paged (its root posted, mentioning `mentioned` for a critical one), each thing its thread
    was told, and its resolution."""
    subject, seen = f"Alert {alert.alert_id}", alert.observation
    entries = [Entry(alert.first_seen, ALERT, subject, f"first seen: {seen.title}")]
    if seen.since is not None and seen.since < alert.first_seen:
        entries.append(Entry(seen.since, ALERT, subject, "the condition says it began"))
    if alert.firing_since is not None:
        entries.append(Entry(alert.firing_since, ALERT, subject, f"fired ({seen.severity.value})"))
    paged = slack_time(alert.root_ts)
    if paged is not None:
        who = ", ".join(mentioned) if seen.severity is Severity.CRITICAL and mentioned else ""
        words = "paged: root posted in the alert channel" + (f", mentioning {who}" if who else "")
        entries.append(Entry(paged, ALERT, subject, words))
    entries += [_told(subject, note) for note in alert.history]
    if alert.resolved_at is not None and not any(
        n.kind is NoteKind.RESOLVED for n in alert.history
    ):
        entries.append(Entry(alert.resolved_at, ALERT, subject, "resolved"))
    return entries


def _told(subject: str, note: Note) -> Entry:
    words = {
        NoteKind.DIAGNOSIS: "diagnosis gathered (first reply)",
        NoteKind.CHANGES: "what changed in the hour before, gathered (second reply)",
        NoteKind.REMINDER: "reminder: still firing",
        NoteKind.ACKNOWLEDGED: "acknowledged",
        NoteKind.SILENCED: "silenced",
        NoteKind.UNSILENCED: "silence ended by hand",
        NoteKind.SILENCE_EXPIRED: "silence expired",
        NoteKind.ESCALATED: "escalated (alerts.escalate_to)",
        NoteKind.RESOLVED: "resolved",
        NoteKind.JOINED: "clusters joined",
        NoteKind.RECOVERED: "clusters no longer watched"
        if note.unwatched
        else "clusters recovered",
        NoteKind.GROUPED: "followed from here on as a fleet incident",
    }[note.kind]
    if note.kind is NoteKind.SILENCED and note.until is not None:
        words += f" until {note.until.strftime('%Y-%m-%d %H:%M:%SZ')}"
    if note.kind in (NoteKind.JOINED, NoteKind.RECOVERED) and note.clusters:
        words += f": {', '.join(note.clusters)}"
    why = note.reason if note.kind is NoteKind.SILENCED else ""
    return Entry(note.at, ALERT, subject, words, who=note.user, why=why)


def slack_time(ts: str) -> datetime | None:
    """When Slack says a message was posted: its `ts` is seconds since the epoch."""
    try:
        return datetime.fromtimestamp(float(ts), UTC) if ts else None
    except (ValueError, OverflowError, OSError):
        return None
