"""The postmortem draft of one incident, as a Markdown file (`/kai timeline ALERT_ID`): what
happened, oldest first, from the alert's own story and every change and eviction in its window,
what the sources could not see, and the headings a postmortem fills in. Pure.

Text from the cluster or a person is redacted of secrets (`bot.core.redaction`) and its Markdown
characters escaped, so a name cannot become a link, a heading or a table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.alerts.model import AlertState
from bot.core.durations import format_duration
from bot.core.redaction import redact
from bot.timeline.model import Entry, Reach

_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>|~])")  # what can start emphasis, code, a link, HTML
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)


def md(text: str) -> str:
    """`text` shown as written in Markdown: secrets redacted, invisible characters removed,
    every character Markdown reads escaped, on one line."""
    cleaned = " ".join(_INVISIBLE.sub("", redact(text)).split())
    return _MARKDOWN.sub(r"\\\1", cleaned)


def filename(alert: AlertState) -> str:
    """`postmortem-prod-3f9a2c-20261203T1402.md`."""
    fired = (alert.firing_since or alert.first_seen).strftime("%Y%m%dT%H%M")
    cluster = re.sub(r"[^A-Za-z0-9._-]", "-", alert.key.cluster.lstrip("_"))
    return f"postmortem-{cluster}-{alert.alert_id}-{fired}.md"


def postmortem(
    alert: AlertState,
    entries: Sequence[Entry],
    reaches: Sequence[Reach],
    window: tuple[datetime, datetime],
    now: datetime,
) -> str:
    """The whole draft."""
    seen, start = alert.observation, alert.firing_since or alert.first_seen
    end = alert.resolved_at
    lasted = format_duration(max((end or now) - start, timedelta(0)))
    lines = [
        f"# Postmortem draft: {md(seen.title)} (alert {alert.alert_id})",
        "",
        f"- **Where:** {md(alert.where)}",
        f"- **What:** {md(seen.key.subject)}, {md(seen.key.condition)} ({seen.severity.value})",
        f"- **Fired:** {_time(start)}",
        f"- **Resolved:** {_time(end)} (after {lasted})" if end else "- **Resolved:** not yet",
        f"- **The operator's words:** {md(seen.message)}" if seen.message else "",
        "",
        "## Summary",
        "",
        "_What happened, in two sentences: to be written._",
        "",
        f"## Timeline ({_time(window[0])} to {_time(window[1])}, oldest first)",
        "",
        *(_line(entry) for entry in sorted(entries, key=lambda e: e.at)),
        "",
    ]
    if reaches:
        lines += ["## What the sources could not see", ""]
        lines += [_reach(reach) for reach in reaches] + [""]
    lines += [
        "## Impact",
        "",
        "_To be written._",
        "",
        "## Follow-ups",
        "",
        "- [ ] _To be written._",
    ]
    lines += ["", f"_Drafted by kai-chatops at {_time(now)}._", ""]
    return "\n".join(line for i, line in enumerate(lines) if line or i == 0 or lines[i - 1])


def _line(entry: Entry) -> str:
    line = f"- `{_time(entry.at)}` **{md(entry.subject)}** {md(entry.what)} ({md(entry.source)})"
    if entry.who:
        line += f"; by {md(entry.who)}"
    if entry.approved_by:
        line += f", approved by {md(entry.approved_by)}"
    if entry.why:
        line += f"; why: {md(entry.why)}"
    return line


def _reach(reach: Reach) -> str:
    if reach.since is None:
        return f"- {md(reach.source)}: {md(reach.note)}."
    return f"- {md(reach.source)}: back to {_time(reach.since)} only ({md(reach.note)})."


def _time(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%SZ") if at is not None else "unknown"
