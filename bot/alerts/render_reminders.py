"""How a reminder of a forgotten pause or suspend looks in Slack: its root, replies and end.

Pure Block Kit dicts, fitted to Slack's limits; every time shown comes from the state (the root
is rendered again for its edit and to check what Slack shows, so it must not depend on the
clock). It names who made the change (a recorded user ID mentions them; one made by hand says
"by hand, no record"), why, since when, and how to end it. No buttons: nothing to acknowledge,
the reminders stop when the change ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.alerts.model import AlertState, Note, NoteKind
from bot.alerts.reminders import since_of
from bot.alerts.render import RESOLVED_ICON, format_time
from bot.commands.kinds import FLUX_KIND_WORDS
from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_join, rich_text
from bot.rules import keda
from bot.slack.blocks import Message, Text, context, escape, fit_message, mention, section

HELD_ICON = ":double_vertical_bar:"
_FLUX_WORDS: dict[str, str] = {kind: short for kind, _, short in FLUX_KIND_WORDS}
_DIRECTIONS = {"scale-in": keda.PAUSED_SCALE_IN, "scale-out": keda.PAUSED_SCALE_OUT}


def root_message(alert: AlertState, *, command: str) -> Message:
    """The reminder's root: what is held and how, by whom, why, since when, how to end it;
    once ended, when and after how long."""
    seen = alert.observation
    ended = alert.resolved_at
    label = "Ended" if ended is not None else f"Still {_what(alert)}, with no end"
    icon = RESOLVED_ICON if ended is not None else HELD_ICON
    facts: list[Text] = [
        f"{icon} *{label}* · *{escape(_target(alert))}* on *{escape(alert.key.cluster)}*",
        _who(alert),
        f"*Since:* {format_time(since_of(alert))}   *How:* {escape(seen.title)}",
        f"*Why:* {escape(seen.reason) if seen.reason else 'no reason given'}",
    ]
    if ended is not None:
        status = f"Ended at {format_time(ended)}, after {_elapsed(since_of(alert), ended)}."
    else:
        reminded = alert.firing_since or alert.first_seen
        status = (
            f"Reminded at {format_time(reminded)}, after {_elapsed(since_of(alert), reminded)}; "
            f"again until it ends. {_how_to_end(alert, command)}"
        )
    text = rich_text(f"[{label.upper()}] {alert.key.cluster}: {_target(alert)} ", _by(alert))
    blocks = [section(rich_join("\n", facts)), context(status)]
    return fit_message({"text": text, "blocks": blocks})


def reply_message(alert: AlertState, note: Note) -> Message:
    """A reminder in the thread (who, why, since when, for how long now), or its end."""
    since = since_of(alert)
    where = f"{escape(_target(alert))} on {escape(alert.key.cluster)}"
    text: Text
    if note.kind is NoteKind.RESOLVED:
        text = (
            f"{RESOLVED_ICON} {where} is no longer {_what(alert)} as reminded here: it ended "
            f"by {format_time(note.at)}, after {_elapsed(since, note.at)}."
        )
    else:
        why = escape(alert.observation.reason) or "no reason given"
        text = rich_text(
            f":bell: Still {_what(alert)}: {where}, ",
            _by(alert),
            f", since {format_time(since)} ({_elapsed(since, note.at)}). Why: {why}.",
        )
    return fit_message({"text": text, "blocks": [section(text)]})


def _what(alert: AlertState) -> str:
    """`paused` or `suspended`."""
    return alert.key.condition.split(" ", 1)[0]


def _target(alert: AlertState) -> str:
    return f"{alert.key.kind} {alert.key.object}"


def _who(alert: AlertState) -> Text:
    what, by = _what(alert).capitalize(), alert.observation.by
    if by:
        return rich_text(f"*{what} by:* ", mention(by))
    return f"*{what}:* by hand, no record (since: when kai-chatops first saw it)"


def _by(alert: AlertState) -> Rich:
    by = alert.observation.by
    return rich_text(f"{_what(alert)} by ", mention(by)) if by else rich_text("by hand, no record")


def _how_to_end(alert: AlertState, command: str) -> str:
    """The command that ends it, or for a one-direction pause the annotation to remove."""
    key = alert.key
    title = alert.observation.title
    directions = [name for word, name in _DIRECTIONS.items() if word in title]
    if title.startswith("paused (scale-"):
        return f"Remove {' and '.join(directions)} to end it."
    where = f"{key.object} --cluster {key.cluster}"
    if key.kind == "ScaledJob":
        return f"`{escape(command)} resume {escape(where)}` ends it."
    if key.kind == "ScaledObject":
        return f"`{escape(command)} resume scaledobject {escape(where)}` ends it."
    word = _FLUX_WORDS.get(key.kind, key.kind.lower())
    return f"`{escape(command)} resume {word} {escape(where)}` ends it."


def _elapsed(start: datetime, end: datetime) -> str:
    return format_duration(max(end - start, timedelta(0)), "minute")
