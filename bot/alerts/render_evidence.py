"""How a new incident's diagnosis (and what changed before it) looks in its thread, and how much
of it the state keeps: the reply as stored (`evidence_message`), the one line when there is
nothing to diagnose, the footer naming the command that looks again, and the cut to
`EVIDENCE_KEPT` characters. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bot.alerts.model import AlertKey
from bot.slack.blocks import Block, Message, context, escape, fit_message, truncate, truncate_mrkdwn

EVIDENCE_KEPT = 12_000  # characters (as JSON) of a diagnosis stored in the state until posted
CHANGES_KEPT = 3_000  # of what changed before an alert (a dozen lines: `bot.timeline.render`)
_EVIDENCE_TEXT = 2_000  # of which its fallback text
_BLOCK_OVERHEAD = 120  # JSON around a block's text
_BLOCK_SHARE = 600  # characters a cut block keeps at least: fewer blocks, each still readable


def evidence_message(text: str, blocks: Sequence[Mapping[str, Any]]) -> Message:
    """A stored diagnosis as the thread's first reply (escaped again: the state document is
    not trusted to be as we wrote it)."""
    return fit_message({"text": text, "blocks": [dict(b) for b in blocks]})


def no_evidence(key: AlertKey) -> Message:
    """The first reply of an alert with no component to diagnose."""
    text = f"No diagnosis for {key.subject} {key.condition}: nothing to look at beyond the alert."
    return fit_message({"text": escape(text), "blocks": [context(escape(text))]})


def no_changes(key: AlertKey) -> Message:
    """The second reply where nothing reads what changed (a desk built without it)."""
    text = f"What changed before {key.subject} {key.condition}: not read here."
    return fit_message({"text": escape(text), "blocks": [context(escape(text))]})


def evidence_footer(command: str) -> Block:
    return context(f"Gathered when the alert fired. `{escape(command)}` looks again.")


def kept_evidence(message: Message, limit: int = EVIDENCE_KEPT) -> tuple[str, list[Block]]:
    """A rendered diagnosis within `limit` characters of JSON, so the state document stays
    small while it is owed: long texts are cut first (each to its share), then whole blocks
    from the end, saying how many were left out."""
    text = truncate(str(message.get("text", "")), _EVIDENCE_TEXT)
    blocks: list[Block] = [dict(b) for b in message.get("blocks", [])]
    budget = limit - len(json.dumps(text)) - _BLOCK_OVERHEAD
    if _json_size(blocks) > budget:
        share = max(budget // max(len(blocks), 1) - _BLOCK_OVERHEAD, _BLOCK_SHARE)
        blocks = [_shortened(b, share) for b in blocks]
    dropped = 0
    while blocks and _json_size(blocks) > budget:
        blocks.pop()
        dropped += 1
    if dropped:
        blocks.append(context(f"… {dropped} more part(s) of the diagnosis not kept here."))
    return text, blocks


def _json_size(blocks: Sequence[Block]) -> int:
    return len(json.dumps(blocks))


def _shortened(block: Block, limit: int) -> Block:
    if block.get("type") == "section" and "text" in block:
        inner = {**block["text"], "text": truncate_mrkdwn(block["text"]["text"], limit)}
        return {**block, "text": inner}
    if block.get("type") == "context":
        elements = [
            {**e, "text": truncate(e["text"], limit)} if isinstance(e.get("text"), str) else e
            for e in block.get("elements", [])
        ]
        return {**block, "elements": elements}
    return block
