"""How the replies in an alert's thread look: a reminder, who acknowledged or silenced it and
why, the end of a silence, the escalation, a fleet incident's clusters joining, recovering or
no longer watched, and the resolution (a fleet incident's end, once no cluster still watched
fires it). Pure, fitted to Slack's limits; every time shown comes from the alert or the note.
(The first reply, the diagnosis, is stored rendered: `render_evidence`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.alerts.model import AlertState, Note, NoteKind
from bot.alerts.render import (
    RESOLVED_ICON,
    UNWATCHED_ICON,
    elapsed,
    ended_unwatched,
    fired_for,
    format_time,
    listed,
    mentions,
)
from bot.core.redaction import redact
from bot.core.rich import Rich, rich_text
from bot.slack.blocks import Message, Text, escape, fit_message, mention, section


def reply_message(alert: AlertState, note: Note, escalate_to: Sequence[str] = ()) -> Message:
    """One reply in the alert's thread: a reminder, who acknowledged or silenced it and why,
    the end of a silence, the escalation (mentioning `escalate_to`), or the resolution. (The
    first reply, the diagnosis, is stored rendered: `evidence_message`.)"""
    text: Text
    if note.kind is NoteKind.ESCALATED:
        text = _escalated(alert, note, escalate_to)
    else:
        text = _REPLIES[note.kind](alert, note)
    return fit_message({"text": text, "blocks": [section(text)]})


def _escalated(alert: AlertState, note: Note, escalate_to: Sequence[str]) -> Rich:
    since = alert.firing_since or alert.first_seen
    return rich_text(
        ":sos: Escalating to ",
        mentions(escalate_to) or "nobody (alerts.escalate_to is empty)",
        f": {escape(alert.observation.title)} has been firing for {elapsed(since, note.at)} "
        f"(since {format_time(since)}), neither acknowledged nor silenced.",
    )


def _reminder(alert: AlertState, note: Note) -> str:
    since = alert.firing_since or alert.first_seen
    return (
        f":bell: Still firing: {escape(alert.observation.title)}, since {format_time(since)} "
        f"({elapsed(since, note.at)}). Acknowledge or silence it to stop these reminders."
    )


def _acknowledged(alert: AlertState, note: Note) -> Rich:
    return rich_text(
        ":eyes: Acknowledged by ",
        mention(note.user),
        f" at {format_time(note.at)}. No more reminders for this incident.",
    )


def _silenced(alert: AlertState, note: Note) -> Rich:
    until = note.until or note.at
    why = f" Reason: {escape(note.reason)}" if note.reason else " No reason given."
    return rich_text(
        ":no_bell: Silenced by ",
        mention(note.user),
        f" at {format_time(note.at)} for {elapsed(note.at, until)}, "
        f"until {format_time(until)}.{why}",
    )


def _silence_over(alert: AlertState, note: Note, what: Rich) -> Rich:
    if not note.still_bad:
        return what + " The condition is clear; the alert resolves once it stays clear."
    owner = rich_text(" (acknowledged by ", mention(alert.acked_by), ")") if alert.acked_by else ""
    return rich_text(what, " The condition still holds: firing again", owner, ".")


def _unsilenced(alert: AlertState, note: Note) -> Rich:
    what = rich_text(
        ":bell: Silence lifted by ", mention(note.user), f" at {format_time(note.at)}."
    )
    return _silence_over(alert, note, what)


def _silence_expired(alert: AlertState, note: Note) -> Rich:
    by = rich_text(" by ", mention(note.user)) if note.user else ""
    at = f" expired at {format_time(note.at)}."
    return _silence_over(alert, note, rich_text(":alarm_clock: The silence", by, at))


def _resolved(alert: AlertState, note: Note) -> str:
    if ended_unwatched(alert):
        return _ended(alert, note)
    cleared = alert.clear_since or note.at
    return (
        f"{RESOLVED_ICON} Resolved at {format_time(note.at)}: clear since {format_time(cleared)}. "
        f"It fired for {fired_for(alert, note.at)}."
    )


def _ended(alert: AlertState, note: Note) -> str:
    """The end of a fleet incident some of whose clusters left the configuration while firing:
    no cluster still watched fires it, and nobody saw those recover."""
    return (
        f"{UNWATCHED_ICON} Ended at {format_time(note.at)}: no cluster still watched fires it. "
        f"No longer watched (removed from the configuration, so not seen to clear): "
        f"{escape(listed(alert.unwatched))}. It fired for {fired_for(alert, note.at)}."
    )


def _group_changed(alert: AlertState, note: Note) -> str:
    """An Alertmanager group's alerts that joined it or resolved (`note.reason`: a line each)."""
    joined = note.kind is NoteKind.JOINED
    icon, what = (":heavy_plus_sign:", "Now firing too") if joined else (RESOLVED_ICON, "Resolved")
    lines = [redact(line) for line in note.reason.split("\n")]
    shown = escape("\n".join(lines))
    return f"{icon} {what} at {format_time(note.at)} ({len(lines)}):\n```{shown}```"


def _joined(alert: AlertState, note: Note) -> str:
    if alert.key.is_alertmanager:
        return _group_changed(alert, note)
    names = note.clusters
    fire = "fires" if len(names) == 1 else "fire"
    when = f", since {format_time(note.at)}" if note.until is None else f" ({_between(note)})"
    return (
        f":heavy_plus_sign: {escape(_and(names))} {fire} it too{when}: "
        f"{len(alert.firing_clusters)} of {len(alert.clusters)} clusters firing."
    )


def _recovered(alert: AlertState, note: Note) -> str:
    if alert.key.is_alertmanager:
        return _group_changed(alert, note)
    firing = len(alert.firing_clusters)
    if note.unwatched:
        rest = f"{firing} still firing." if firing else "no cluster still watched fires it."
        when = f"by {format_time(note.at)}" if note.until is None else _between(note)
        return (
            f"{UNWATCHED_ICON} No longer watched (removed from the configuration {when}, so "
            f"not seen to clear): {escape(listed(note.clusters))}; {rest}"
        )
    rest = f"{firing} still firing." if firing else "none left firing."
    when = f"at {format_time(note.at)}" if note.until is None else _between(note)
    return f"{RESOLVED_ICON} {escape(_and(note.clusters))} recovered {when}; {rest}"


def _between(note: Note) -> str:
    """When the clusters of a fleet reply told together changed: after the last reply of its
    kind, by this one."""
    return f"between {format_time(note.at)} and {format_time(note.until or note.at)}"


def _and(names: tuple[str, ...]) -> str:
    """`a`, `a and b`, `a, b and c`; a long list cut as `listed` cuts it."""
    shown = listed(names)
    if len(names) < 2 or shown.endswith(" more"):
        return shown
    head, _, last = shown.rpartition(", ")
    return f"{head} and {last}"


def _grouped(alert: AlertState, note: Note) -> str:
    return (
        f":link: The same alert now fires on several clusters: followed from here on as one "
        f"fleet incident, `{escape(note.reason)}` (acknowledge or silence it there)."
    )


_REPLIES: dict[NoteKind, Callable[[AlertState, Note], Text]] = {
    NoteKind.JOINED: _joined,
    NoteKind.RECOVERED: _recovered,
    NoteKind.GROUPED: _grouped,
    NoteKind.REMINDER: _reminder,
    NoteKind.ACKNOWLEDGED: _acknowledged,
    NoteKind.SILENCED: _silenced,
    NoteKind.UNSILENCED: _unsilenced,
    NoteKind.SILENCE_EXPIRED: _silence_expired,
    NoteKind.RESOLVED: _resolved,
}
