"""How `/kai changes` looks: every pause and suspend in force, one line each, within Slack's limits.

Pure. The same held objects the Home tab shows (`bot.rules.held`), with since when (our record's
time, or for one made by hand when kai-chatops first saw it, if it did) and until when ("no
end" when it has none). Lines from the cluster are escaped; only recorded user IDs mention.
What does not fit is counted, never cut silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from bot.alerts.reminders import FirstSeen
from bot.core import conditions
from bot.core.rich import Rich, rich_join, rich_text
from bot.home.model import HeldObject
from bot.home.render import age, person, record_time, shown_time
from bot.slack.blocks import Message, context, escape, fit_message, header, section
from bot.slack.packing import pack_lines

MAX_SECTIONS = 40


def changes_message(
    held: Sequence[HeldObject],
    *,
    clusters: Sequence[str],
    now: datetime,
    first_seen: FirstSeen | None = None,
    notes: Sequence[str] = (),
) -> Message:
    """The `/kai changes` reply: a title naming the clusters read, a count, a line per change
    (in the order given), what could not be read, and how many lines did not fit."""
    title = f"Pauses and suspends in force on {', '.join(clusters)}"
    counts = _count_text(held)
    lines = [change_line(h, now, (first_seen or {}).get(_key(h))) for h in held]
    errors = [f":warning: {escape(note)}" for note in notes]
    if not lines:
        empty = "Nothing is paused or suspended."
        blocks = [header(title), *map(section, [*errors, empty])]
        return fit_message({"text": rich_join("\n", [title, *errors, empty]), "blocks": blocks})
    sections, placed = pack_lines(lines, MAX_SECTIONS)
    left_out = [f"… {len(lines) - placed} more not shown here"] if placed < len(lines) else []
    blocks = [header(title), context(counts), *map(context, errors), *sections]
    blocks += [context(note) for note in left_out]
    text = rich_join("\n", [title, counts, *errors, *lines[:placed], *left_out])
    return fit_message({"text": text, "blocks": blocks})


def change_line(held: HeldObject, now: datetime, first_seen: datetime | None = None) -> Rich:
    """`⏸ sim · ScaledJob annia/annia-worker paused by @U · since … (2h ago) · no end · why: …`."""
    what = f"{held.what} ({escape(held.how)})" if held.how else held.what
    head = f":double_vertical_bar: {escape(held.cluster)} · *{escape(held.target)}* {what}"
    who = rich_text(" by ", person(held.by)) if held.by else rich_text(" by hand, no record")
    since = conditions.parse_timestamp(held.at) if held.by else first_seen
    if since is not None:
        seen = "since" if held.by else "first seen"
        when = f" · {seen} {shown_time(since)} ({age(since, now)} ago)"
    else:
        when = " · since unknown"
    until = f" · until {escape(record_time(held.until))}" if held.is_timed else " · no end"
    why = f" · why: {escape(held.reason)}" if held.reason else ""
    return rich_text(head, who, when, until, why)


def _count_text(held: Sequence[HeldObject]) -> str:
    """`3 paused · 1 suspended`."""
    counts = Counter(h.what for h in held)
    return " · ".join(f"{counts[w]} {w}" for w in ("paused", "suspended") if counts[w])


def _key(held: HeldObject) -> tuple[str, str, str, str]:
    return (held.cluster, held.kind, held.namespace, held.name)
