"""How KEDA autoscalers look in Slack: the `/kai scaledjobs` listing and the words for a pause.

Pure: plain dicts through `bot.slack.blocks`, `now` as an argument. A listing too long for one
message is summarised, never cut silently: counts per verdict, every object that is not Healthy
in full (as many as fit), and a note of exactly what is left out. Confirmations and results of a
pause or resume are in `bot.keda.render_changes`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.core import conditions
from bot.core.durations import format_duration
from bot.core.models import Health
from bot.core.rich import Rich, rich_text
from bot.keda.pause import KedaRow, KedaTarget
from bot.rules import keda
from bot.rules.keda import PauseState
from bot.slack import blocks, limits
from bot.slack.blocks import Block, Message

MAX_LINE = 600  # one object's line, so a hand-written annotation cannot crowd out the rest
SECTION_BUDGET = limits.MAX_SECTION_TEXT - 200
BLOCK_BUDGET = limits.MAX_BLOCKS - 4  # header, counts and the notes on what is left out
TEXT_BUDGET = limits.MAX_MESSAGE_TEXT - 2000
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_ORDER = sorted(Health, key=lambda h: -h.rank)
_MINUTE = timedelta(minutes=1)


def listing_message(
    rows: Sequence[KedaRow], *, cluster: str, scope: str, now: datetime, command: str = "/kai"
) -> Message:
    """The `/kai scaledjobs` reply: every object grouped by namespace, or a summary if too long."""
    title = f"KEDA ScaledJobs and ScaledObjects on {cluster}: {scope}"
    if not rows:
        note = f"No ScaledJobs or ScaledObjects in {scope} on {cluster}."
        empty = [blocks.header(title), blocks.section(blocks.escape(note))]
        return blocks.fit_message({"text": note, "blocks": empty})
    sections, packed = pack_sections(rows, now, BLOCK_BUDGET)
    visible, notes = list(rows), []
    if packed < len(rows):
        # Too long: the ones that need a look in full, the healthy ones counted.
        wanted = [r for r in rows if needs_attention(r)]
        sections, packed = pack_sections(wanted, now, BLOCK_BUDGET)
        visible = wanted[:packed]
        shown = {_key(r) for r in visible}
        left_out = [r for r in rows if _key(r) not in shown]
        notes = [left_out_text(left_out, rows, command)]
    counts = count_text(rows)
    text = _fallback_text(title, counts, visible, notes, now)
    parts = [blocks.header(title), blocks.context(counts), *sections]
    parts += [blocks.context(blocks.escape(note)) for note in notes]
    return blocks.fit_message({"text": text, "blocks": parts})


def _fallback_text(
    title: str, counts: str, visible: Sequence[KedaRow], notes: list[str], now: datetime
) -> str:
    """The plain text: every line shown, or if too long the ones needing attention, or none."""
    for chosen in (visible, [r for r in visible if needs_attention(r)]):
        lines = [blocks.escape(str(object_line(r, now, md=False))) for r in chosen]
        if len(chosen) < len(visible):
            lines.append(f"{len(visible) - len(chosen)} Healthy: see the message.")
        text = "\n".join([title, counts, *lines, *notes])
        if len(text) <= TEXT_BUDGET:
            return text
    return "\n".join([title, f"{counts} (details in the message)", *notes])


def needs_attention(row: KedaRow) -> bool:
    """Not Healthy, or Healthy with a note (KEDA lagging, a leftover pause record)."""
    return not row.verdict.health.is_healthy or bool(_notes(row))


def pack_sections(
    rows: Sequence[KedaRow], now: datetime, max_blocks: int
) -> tuple[list[Block], int]:
    """Object lines under namespace headings, in order, in sections of SECTION_BUDGET characters.

    Returns:
        At most `max_blocks` sections, and how many of `rows` (the first ones) they hold.
    """
    sections: list[Block] = []
    body, pending, packed, namespace = Rich(), 0, 0, None
    for row in rows:
        title = f"*{blocks.escape(row.namespace)}*"
        line = object_line(row, now, md=True)
        addition = line if row.namespace == namespace else rich_text(f"{title}\n", line)
        if body and len(body) + 1 + len(addition) > SECTION_BUDGET:
            if len(sections) == max_blocks:
                return sections, packed
            sections.append(blocks.section(body))
            body, packed, pending = Rich(), packed + pending, 0
            addition = rich_text(f"{title} (continued)\n", line) if addition == line else addition
        body = rich_text(body, "\n", addition) if body else addition
        pending, namespace = pending + 1, row.namespace
    if body and len(sections) < max_blocks:
        sections.append(blocks.section(body))
        packed += pending
    return sections, packed


def _key(row: KedaRow) -> tuple[str, str, str]:
    return (row.namespace, row.kind, row.name)


def count_text(rows: Sequence[KedaRow]) -> str:
    """`3 objects in 1 namespace: 2 Healthy · 1 Suspended`, worst verdicts first."""
    namespaces = len({r.namespace for r in rows})
    where = f"{_plural(len(rows), 'object')} in {_plural(namespaces, 'namespace')}"
    return f"{where}: {_by_health(rows, ' · ')}"


def left_out_text(left_out: Sequence[KedaRow], rows: Sequence[KedaRow], command: str) -> str:
    """What a summarised listing does not show one by one, and how to see it."""
    namespaces = sorted({r.namespace for r in left_out})
    where = ", ".join(namespaces[:10])
    if len(namespaces) > 10:
        where += f" and {len(namespaces) - 10} more"
    text = (
        "Too many to list in one Slack message. "
        f"Not shown one by one: {_by_health(left_out, ', ')} (in {where})."
    )
    if len({r.namespace for r in rows}) > 1:
        return f"{text} `{command} scaledjobs NAMESPACE` lists one namespace."
    return f"{text} `kubectl get scaledjobs,scaledobjects -n {namespaces[0]}` lists them all."


def _by_health(rows: Sequence[KedaRow], separator: str) -> str:
    counts = Counter(r.verdict.health for r in rows)
    return separator.join(f"{counts[h]} {h.value}" for h in _ORDER if counts[h])


def object_line(row: KedaRow, now: datetime, *, md: bool) -> Rich:
    """One object: verdict, kind and name, its pause (who, when, until, why) or its problem."""
    health = row.verdict.health
    name = f"*{blocks.escape(row.name)}*" if md else f"{row.namespace}/{row.name}"
    line = rich_text(f"{blocks.ICONS[health]} {name}" if md else name, f" ({row.kind}): ")
    line += health.value
    notes = _notes(row)
    if row.state.paused:
        line += " — " + pause_words(row.state, now, md=md)
    elif not health.is_healthy:
        line += " — " + (blocks.escape(row.verdict.message) if md else row.verdict.message)
        # The verdict's message already carries the disagreement note.
        notes = [n for n in notes if n != row.state.disagreement]
    for note in notes:
        line += f" (note: {blocks.escape(note) if md else note})"
    return blocks.truncate(line, MAX_LINE)


def _notes(row: KedaRow) -> list[str]:
    state = row.state
    notes = [state.disagreement] if state.disagreement else []
    if not state.paused and (state.paused_by or state.until):
        notes.append("a kai-chatops pause record is still on it (resumed by hand?)")
    return notes


def pause_words(state: PauseState, now: datetime, *, md: bool) -> Rich:
    """`paused by @ann at 2026-08-24 08:00 UTC, until 10:00 UTC (in 2h): node drain`.

    Hand-written values are escaped for mrkdwn (`md`), so none can mention or link anyone.
    """
    shown = blocks.escape if md else str
    if state.paused_by:
        text = rich_text("paused by ", user_ref(state.paused_by, md=md))
    else:
        text = rich_text("paused by hand (no kai-chatops record)")
    if state.paused_at:
        text += f" at {shown(show_time(state.paused_at))}"
    automatic = state.paused_value == "true" and bool(state.paused_by)
    if state.until:
        when = until_words(state.until, now, automatic=automatic)
        text += f", until {shown(show_time(state.until))} ({when})"
    elif state.paused_by:
        text += ", until resumed"
    if state.reason:
        text += f": {shown(state.reason)}"
    annotation = annotation_words(state)
    if annotation != f'{keda.PAUSED}: "true"':
        text += f" [{shown(annotation)}]"
    return text


def annotation_words(state: PauseState) -> str:
    """The pause annotations as written: `autoscaling.keda.sh/paused: "true"`."""
    present = [(keda.PAUSED, state.paused_value), (keda.PAUSED_REPLICAS, state.paused_replicas)]
    words = [f'{key}: "{value}"' for key, value in present if value is not None]
    return ", ".join(words) or f"no {keda.PAUSED} annotation"


def user_ref(user: str, *, md: bool) -> Rich:
    """A Slack mention for a user ID we wrote; anything else hand-written, shown as text."""
    if md:
        return blocks.mention(user) if _USER_ID.fullmatch(user) else rich_text(blocks.escape(user))
    return rich_text(user)


def show_time(text: str) -> str:
    """An RFC 3339 annotation as `2026-08-24 10:00 UTC`; shown as written if it does not parse."""
    moment = conditions.parse_timestamp(text)
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else repr(text)


def until_words(until: str, now: datetime, *, automatic: bool = True) -> str:
    """`in 1h12m`, or `overdue by 5m: the next timed-pause check resumes it`.

    `automatic` is False when the pause no longer reads as ours (changed by hand): then nothing
    resumes it by itself, and the words say so.
    """
    moment = conditions.parse_timestamp(until)
    if moment is None or not automatic:
        return "not resumed automatically: the pause was changed by hand"
    if moment > now:
        return f"in {short_duration(moment - now)}"
    late = f"overdue by {short_duration(now - moment)}" if now - moment >= _MINUTE else "due now"
    return f"{late}: the next timed-pause check resumes it"


def short_duration(span: timedelta) -> str:
    """A duration to the minute once it is over one: `1h12m`, `45s`."""
    seconds = round(span.total_seconds())
    if seconds >= 60:
        seconds = round(seconds / 60) * 60
    return format_duration(timedelta(seconds=seconds))


def missing_text(target: KedaTarget, other_exists: bool) -> str:
    """The object does not exist; say so, and point at the other kind when it has that name."""
    text = (
        f"{target.kind} {target.namespace}/{target.name} does not exist on cluster "
        f"{target.cluster}; nothing was changed."
    )
    if other_exists:
        word = "scaledobject " if target.other_kind == "ScaledObject" else ""
        text += (
            f" There is a {target.other_kind} of that name: write "
            f"`pause {word}{target.namespace}/{target.name}` (or `resume {word}...`)."
        )
    return text


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
