"""How `/kai list` looks, and the words of the "objects of that name elsewhere" hint.

Pure. One line per object (icon, namespace/name, verdict, a short message), worst first, packed
within Slack's limits with a count of what was left out; the fallback text says the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from bot.core.models import Health, Verdict
from bot.listing.usecase import Found
from bot.slack import blocks as render
from bot.slack import packing

MAX_SECTIONS = 45
MAX_MESSAGE = 300  # of one object's message: a line each, so the worst ones all fit
_ORDER = sorted(Health, key=lambda h: -h.rank)


def list_message(
    verdicts: Sequence[Verdict], *, kind: str, cluster: str, scope: str, hint: str = ""
) -> render.Message:
    """The `/kai list KIND` reply."""
    title = f"{kind} on {cluster}: {scope}"
    counts = count_text(verdicts)
    if not verdicts:
        note = f"No {kind} in {scope} on {cluster}."
        blocks = [render.header(title), render.section(render.escape(note))]
        return render.fit_message({"text": render.escape(f"{title}\n{note}"), "blocks": blocks})
    lines = [object_line(v) for v in verdicts]
    sections, placed = packing.pack_lines([object_line(v, md=True) for v in verdicts], MAX_SECTIONS)
    notes = [left_out_text(verdicts[placed:], hint)] if placed < len(verdicts) else []
    blocks = [render.header(title), render.context(counts), *sections]
    blocks += [render.context(render.escape(n)) for n in notes]
    text = packing.fit_text([title, counts], [render.escape(x) for x in lines], notes)
    return render.fit_message({"text": text, "blocks": blocks})


def object_line(verdict: Verdict, *, md: bool = False) -> str:
    """`:red_circle: *flux-system/kai*: Degraded — install retries exhausted`."""
    where = f"{verdict.namespace}/{verdict.name}" if verdict.namespace else verdict.name
    message = render.truncate(verdict.message.replace("\n", " "), MAX_MESSAGE)
    if not md:
        return f"{where}: {verdict.health.value} — {message}"
    icon = render.ICONS[verdict.health]
    return f"{icon} *{render.escape(where)}*: {verdict.health.value} — {render.escape(message)}"


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


def elsewhere_text(found: Sequence[Found], name: str, command_for: CommandFor) -> str:
    """`Objects named x elsewhere: HelmRelease flux-system/x (`/kai reconcile hr flux-system/x`).`

    "" when there are none, so a reply without a hint reads as before.
    """
    if not found:
        return ""
    shown = []
    for f in found[:5]:
        command = command_for(f)
        shown.append(f"{f.kind} {f.namespace}/{f.name}" + (f" (`{command}`)" if command else ""))
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f" Objects named {name} elsewhere: {', '.join(shown)}{more}."
