"""Many lines in one Slack message: packed into sections within Slack's limits, never cut silently.

Pure. `pack_lines` fills sections of at most `SECTION_BUDGET` characters, up to a number of
blocks (and, for a view, of bytes of JSON), and says how many lines it placed; the caller names
what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.rich import Rich, rich_text
from bot.slack import blocks as render
from bot.slack import limits
from bot.slack.blocks import Block, Text

SECTION_BUDGET = limits.MAX_SECTION_TEXT - 100
MAX_LINE = 900  # one line never fills a section alone
TEXT_BUDGET = limits.MAX_MESSAGE_TEXT - 2000


def pack_lines(
    lines: Sequence[Text], max_sections: int, max_bytes: int | None = None
) -> tuple[list[Block], int]:
    """Sections holding the first lines in order (mrkdwn, already escaped), and how many; with
    `max_bytes`, only as many lines as take that many bytes of JSON at most (as sent)."""
    sections: list[Block] = []
    body: Rich = Rich()
    placed, room = 0, max_bytes
    for line in lines:
        line = render.truncate(rich_text(line), MAX_LINE)
        if room is not None:
            room -= render.json_size(line) + 1
            if room < 0:
                break
        if body and len(body) + 1 + len(line) > SECTION_BUDGET:
            if len(sections) + 1 == max_sections:
                sections.append(render.section(body))
                return sections, placed
            sections.append(render.section(body))
            body = Rich()
        body = rich_text(body, "\n", line) if body else line
        placed += 1
    if body:
        sections.append(render.section(body))
    return sections, placed


def fit_text(head: Sequence[str], lines: Sequence[str], tail: Sequence[str]) -> str:
    """Plain text of `head`, as many `lines` as fit in a message, and `tail`, saying if cut."""
    budget = TEXT_BUDGET - sum(len(x) + 1 for x in (*head, *tail))
    shown: list[str] = []
    for line in lines:
        budget -= len(line) + 1
        if budget < 0:
            shown.append(f"… {len(lines) - len(shown)} more lines not shown here")
            break
        shown.append(line)
    return "\n".join([*head, *shown, *tail])
