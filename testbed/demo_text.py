"""How the demo console prints Slack: Block Kit messages and channel posts as terminal text.

Pure: takes messages as Slack holds them, returns lines; prints nothing, reads no clock.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

THREAD_MARK = "  ↳ in thread: "
THREAD_INDENT = " " * len(THREAD_MARK)


def reply_as_text(message: Mapping[str, Any]) -> str:
    """A Block Kit message as a terminal would show it."""
    lines = [f"({message.get('response_type', 'ephemeral')})"]
    for block in message.get("blocks") or []:
        lines += block_lines(block)
    return "\n".join(lines) if len(lines) > 1 else str(message.get("text", ""))


def message_lines(text: str, blocks: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every line a reader sees of one channel message: its blocks, else its fallback text."""
    lines = [line for block in blocks for chunk in block_lines(block) for line in chunk.split("\n")]
    if not any(line.strip() for line in lines):
        lines = html.unescape(text).split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines or [""]


def channel_post(channel: str, params: Mapping[str, Any], *, edited: bool) -> str:
    """A whole post (or edit) in a channel, as the console prints it: `[#alerts] ...`, a thread
    reply marked and indented under it."""
    lines = message_lines(str(params.get("text", "")), params.get("blocks") or ())
    if edited:
        return f"\n[{channel}, edited] " + "\n    ".join(lines)
    if params.get("thread_ts"):
        return f"\n[{channel}]{THREAD_MARK}" + "\n".join(
            [lines[0], *(THREAD_INDENT + line for line in lines[1:])]
        )
    return f"\n[{channel}] " + "\n    ".join(lines)


def block_lines(block: Mapping[str, Any]) -> list[str]:
    """One Block Kit block as terminal lines (headers, sections, context, buttons)."""
    kind = block.get("type")
    if kind == "header":
        return ["", f"== {block['text']['text']} =="]
    if kind == "context":
        return ["   " + " ".join(e.get("text", "") for e in block.get("elements", []))]
    if kind == "section" and "text" in block:
        return [mrkdwn_as_text(block["text"]["text"])]
    if kind == "actions":
        return ["   [" + "] [".join(e["text"]["text"] for e in block.get("elements", [])) + "]"]
    return []


def mrkdwn_as_text(text: str) -> str:
    """Slack mrkdwn as plain lines: code blocks indented, entities unescaped."""
    lines = []
    in_code = False
    for raw in html.unescape(text).split("\n"):
        parts = raw.split("```")
        for index, part in enumerate(parts):
            if index:
                in_code = not in_code
            if part or index == 0:
                lines.append(("    " if in_code else "") + part)
    return "\n".join(line for line in lines if line.strip() or not in_code)
