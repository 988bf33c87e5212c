"""How `/kai list` looks, and the words of the "objects of that name elsewhere" hint.

Pure. One line per object (icon, namespace/name, verdict, a short message), worst first, packed
within Slack's limits with a count of what was left out; the fallback text says the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core import conditions
from bot.core.models import Health, RawObject, Verdict
from bot.core.rich import rich_text
from bot.gitops.render_suspend import record_words
from bot.keda.render import pause_words
from bot.listing import places
from bot.listing.commands import close_names
from bot.listing.model import Found, Listed
from bot.rules.flux_suspend import read_suspend_record
from bot.rules.keda import read_pause_state
from bot.slack import packing
from bot.slack.blocks import (
    ICONS,
    Message,
    Text,
    context,
    escape,
    fit_message,
    header,
    section,
    truncate,
)

MAX_SECTIONS = 45
MAX_MESSAGE = 300  # of one object's message: a line each, so the worst ones all fit
_ORDER = sorted(Health, key=lambda h: -h.rank)


@dataclass(frozen=True)
class ObjectRow:
    """One object's line: its verdict and, when it is paused or suspended, who did it, why and
    until when (mrkdwn with mentions, and the same in plain text)."""

    verdict: Verdict
    held: Text = ""
    held_plain: str = ""


def row_of(listed: Listed, now: datetime) -> ObjectRow:
    """The line of one object; a paused or suspended one says who did it, why and until when,
    in the words of the pause and suspend replies ("by hand" when there is no record)."""
    held = _held_words(listed.obj, now, md=True)
    return ObjectRow(listed.verdict, held, str(_held_words(listed.obj, now, md=False)))


def _held_words(obj: RawObject, now: datetime, *, md: bool) -> Text:
    if places.family(conditions.as_text(obj.get("kind"))) == "keda":
        state = read_pause_state(obj)
        return pause_words(state, now, md=md) if state.paused else ""
    found = read_suspend_record(obj)
    return record_words(found, md=md) if found.suspended else ""


def list_message(
    rows: Sequence[ObjectRow],
    *,
    kind: str,
    cluster: str,
    scope: str,
    hint: str = "",
    elsewhere: str = "",
) -> Message:
    """The `/kai list KIND` reply; `elsewhere` says where to look when there is none here."""
    title = f"{kind} on {cluster}: {scope}"
    verdicts = [row.verdict for row in rows]
    counts = count_text(verdicts)
    if not rows:
        note = f"No {kind} in {scope} on {cluster}.{elsewhere}"
        blocks = [header(title), section(escape(note))]
        return fit_message({"text": escape(f"{title}\n{note}"), "blocks": blocks})
    lines = [str(object_line(row)) for row in rows]
    sections, placed = packing.pack_lines([object_line(row, md=True) for row in rows], MAX_SECTIONS)
    notes = [left_out_text(verdicts[placed:], hint)] if placed < len(rows) else []
    blocks = [header(title), context(counts), *sections]
    blocks += [context(escape(n)) for n in notes]
    text = packing.fit_text([title, counts], [escape(x) for x in lines], notes)
    return fit_message({"text": text, "blocks": blocks})


def object_line(row: ObjectRow, *, md: bool = False) -> Text:
    """`:red_circle: *flux-system/kai*: Degraded — install retries exhausted`; a paused or
    suspended object says who, when, until when and why instead of the verdict's message."""
    verdict = row.verdict
    where = f"{verdict.namespace}/{verdict.name}" if verdict.namespace else verdict.name
    message = truncate(verdict.message.replace("\n", " "), MAX_MESSAGE)
    if not md:
        return f"{where}: {verdict.health.value} — {row.held_plain or message}"
    icon = ICONS[verdict.health]
    head = f"{icon} *{escape(where)}*: {verdict.health.value} — "
    return rich_text(head, truncate(row.held, MAX_MESSAGE) or escape(message))


def count_text(verdicts: Sequence[Verdict]) -> str:
    """`12 objects: 1 Degraded · 11 Healthy`."""
    counts = Counter(v.health for v in verdicts)
    each = " · ".join(f"{counts[h]} {h.value}" for h in _ORDER if counts[h])
    return f"{len(verdicts)} object{'s' if len(verdicts) != 1 else ''}: {each}"


def left_out_text(left_out: Sequence[Verdict], hint: str) -> str:
    """What did not fit, by verdict (they are the healthiest, listed last), and how to narrow."""
    counts = Counter(v.health for v in left_out)
    each = ", ".join(f"{counts[h]} {h.value}" for h in _ORDER if counts[h])
    return (
        f"{len(left_out)} more not shown, too many for one Slack message ({each}). {hint}".strip()
    )


CommandFor = Callable[[Found], str]
_SHOWN = 5  # suggestions of each sort in one reply
# How alike a name must be to be offered: names of one team share prefixes (`annia-worker`,
# `annia-trainer`), so a typo should be closer than that to be taken for one.
NAME_CUTOFF = 0.75


def missing_hint(
    missing: Found, same_kind: Sequence[Found], others: Sequence[Found], command_for: CommandFor
) -> str:
    """What to type instead when `missing` does not exist, in the verb the user typed: the
    namespaces where an object of that kind and name does exist, the closest names of that kind
    in the namespace typed ("did you mean"), then objects of that name in other kinds.

    `same_kind`: every object of the missing one's kind that could be read; `others`: objects
    of that name anywhere. "" when there is nothing to suggest, so the reply reads as before.
    """
    namesakes = [f for f in (*same_kind, *others) if f.kind == missing.kind]
    namesakes = [f for f in dict.fromkeys(namesakes) if f.name == missing.name and f != missing]
    in_namespace = [f for f in same_kind if f.namespace == missing.namespace]
    near = {f.name: f for f in in_namespace if f.name != missing.name}
    closest = [near[name] for name in close_names(missing.name, list(near), cutoff=NAME_CUTOFF)]
    other_kinds = [f for f in others if f.kind != missing.kind]
    return (
        _namesakes_text(namesakes, command_for)
        + _did_you_mean_text(closest, command_for)
        + elsewhere_text(other_kinds, missing.name, command_for)
    )


def namespaces_text(found: Sequence[Found], kind: str, command_for: CommandFor) -> str:
    """` There are HelmReleases in keda-system: `/kai list hr keda-system`.`; "" for none."""
    namespaces = list(dict.fromkeys(f.namespace for f in found))
    if not namespaces:
        return ""
    shown = [next(f for f in found if f.namespace == ns) for ns in namespaces[:_SHOWN]]
    more = f" and {len(namespaces) - _SHOWN} more" if len(namespaces) > _SHOWN else ""
    return f" There are {kind} in {', '.join(namespaces[:_SHOWN])}{more}: " + (
        f"{_commands(shown, command_for, ', ')}."
    )


def _namesakes_text(namesakes: Sequence[Found], command_for: CommandFor) -> str:
    if not namesakes:
        return ""
    shown = namesakes[:_SHOWN]
    places = ", ".join(dict.fromkeys(f.namespace for f in shown))
    there = "There is one" if len(namesakes) == 1 else f"There are {len(namesakes)}"
    more = f" and {len(namesakes) - _SHOWN} more" if len(namesakes) > _SHOWN else ""
    return f" {there} in {places}{more}: {_commands(shown, command_for, ', ')}."


def _did_you_mean_text(closest: Sequence[Found], command_for: CommandFor) -> str:
    if not closest:
        return ""
    return f" Did you mean {_commands(closest, command_for, ' or ')}?"


def _commands(found: Sequence[Found], command_for: CommandFor, joiner: str) -> str:
    return joiner.join(f"`{command_for(f)}`" for f in found)


def elsewhere_text(found: Sequence[Found], name: str, command_for: CommandFor) -> str:
    """`Objects named x elsewhere: HelmRelease flux-system/x (`/kai reconcile hr flux-system/x`).`

    "" when there are none, so a reply without a hint reads as before.
    """
    if not found:
        return ""
    shown = []
    for f in found[:_SHOWN]:
        command = command_for(f)
        shown.append(f"{f.kind} {f.namespace}/{f.name}" + (f" (`{command}`)" if command else ""))
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return f" Objects named {name} elsewhere: {', '.join(shown)}{more}."
