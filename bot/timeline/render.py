"""How a timeline looks in Slack: `/kai timeline`'s reply and the alert thread's "What changed in
the hour before". Pure, built with `bot.slack.blocks`: every word from the cluster or a person
is escaped (and event text redacted by the reader); user IDs become mentions only where asked
(the ephemeral reply: nobody is notified), as plain IDs in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.core.durations import format_duration
from bot.core.rich import Rich, rich_join, rich_text
from bot.slack.blocks import Block, Message, Text, context, escape, fit_message, mention, section
from bot.timeline.commands import LONGEST_SINCE
from bot.timeline.model import Entry, Reach, Timeline

LINES_SHOWN = 40  # lines of `/kai timeline` (newest first)
LINES_IN_THREAD = 12  # lines of the alert thread's reply (kept in the state until posted)
SECTION_CHARS = 2800  # of a section's 3000, for the lines packed into it
_USER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")


def timeline_message(timeline: Timeline, since: timedelta, *, command: str) -> Message:
    """`/kai timeline --since DURATION`'s reply."""
    span, longest = format_duration(since, "coarse"), format_duration(LONGEST_SINCE, "coarse")
    title = (
        f"*What changed on {escape(timeline.cluster)} in the last {span}* "
        f"(since {_stamp(timeline.start)})"
    )
    more = f"`{escape(command)} timeline --since DURATION` looks further back (at most {longest})."
    summary = f"What changed on {timeline.cluster} in the last {span}"
    return _message(timeline, (summary, title), LINES_SHOWN, more, mentions=True)


def before_alert_message(timeline: Timeline, *, command: str) -> Message:
    """The alert thread's second reply: what changed in the hour before it fired."""
    title = (
        f"*What changed on {escape(timeline.cluster)} in the hour before* "
        f"({_stamp(timeline.start)} to {_stamp(timeline.end)})"
    )
    more = f"`{escape(command)} timeline --cluster {escape(timeline.cluster)}` looks again."
    summary = f"What changed on {timeline.cluster} in the hour before"
    return _message(timeline, (summary, title), LINES_IN_THREAD, more, mentions=False)


def _message(
    timeline: Timeline, titles: tuple[str, str], shown: int, more: str, *, mentions: bool
) -> Message:
    """The title (fallback text, mrkdwn), the newest `shown` lines, what was left out, how far
    back each source goes where it matters, and what looks again."""
    summary, title = titles
    entries = timeline.entries
    lines = [entry_line(e, timeline, mentions=mentions) for e in entries[:shown]]
    blocks: list[Block] = [section(title)]
    if not lines:
        blocks.append(section("Nothing changed that kai-chatops can see."))
    blocks += [section(chunk) for chunk in _packed(lines)]
    notes = [f"… and {len(entries) - shown} older, not shown."] if len(entries) > shown else []
    notes += [reach_line(r) for r in timeline.reaches]
    notes.append(f"Times in UTC. {more}")
    blocks += [context(note) for note in notes[:10]]
    text = f"{summary}: {len(entries)} change(s) since {_stamp(timeline.start)}"
    return fit_message({"text": escape(text), "blocks": blocks})


def entry_line(entry: Entry, timeline: Timeline, *, mentions: bool) -> Text:
    """`` `14:02:11` *HelmRelease flux-system/kai* upgrade to v4: … (Flux) ``, with who, why
    and who approved when known."""
    at = _clock(entry.at, timeline.start, timeline.end)
    line: list[str | Rich] = [f"`{at}` *{escape(entry.subject)}* {escape(entry.what)}"]
    if entry.who:
        line += [" — by ", _person(entry.who, mentions)]
    if entry.approved_by:
        line += [", approved by ", _person(entry.approved_by, mentions)]
    if entry.why:
        line.append(f", why: {escape(entry.why)}")
    line.append(f" _({escape(entry.source)})_")
    return rich_text(*line)


def reach_line(reach: Reach) -> str:
    """`Evictions: back to 2026-08-24 10:08 UTC only (KAI's Evict Events last an hour…)`, or
    a source that could not be read."""
    source, note = escape(reach.source), escape(reach.note)
    if reach.since is None:
        return f":warning: {source}: {note}."
    return f":information_source: {source}: back to {_stamp(reach.since)} only ({note})."


def _person(who: str, mentions: bool) -> str | Rich:
    if mentions and _USER_ID.fullmatch(who):
        return mention(who)
    return escape(who)


def _packed(lines: Sequence[Text]) -> list[Text]:
    """The lines in as few sections as fit Slack's limit on each."""
    chunks: list[list[Text]] = [[]]
    size = 0
    for line in lines:
        if chunks[-1] and size + len(line) + 1 > SECTION_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += len(line) + 1
    return [rich_join("\n", chunk) for chunk in chunks if chunk]


def _clock(at: datetime, start: datetime, end: datetime) -> str:
    """The time of day within a day's window, else the date too."""
    if end - start <= timedelta(days=1) and at.date() == end.date():
        return at.strftime("%H:%M:%S")
    return at.strftime("%m-%d %H:%M")


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")
