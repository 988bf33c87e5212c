"""Hostile text, and what Slack would read in a message: for the injection tests (issue 11)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

# An odd code fence: text that could end a code block the bot opened; a literal entity: text
# that must show as written, not as what it encodes.
# A mention marker of any shape (the old per-process seal, \x02KEY:@ID\x03, and Slack's own), a
# user-group mention, and bidirectional / zero-width characters that would hide or reorder text.
HOSTILE = (
    "<!channel> <!here> <@U0EVIL> <https://evil.example|logs> & &amp; `tick` ```fence end "
    "\x02a1b2c3d4e5f6:@U0EVIL\x03 \x02:!channel\x03 <!subteam^S0EVIL> \u202egnp.exe\u200b\u2066"
)
INVISIBLE = ("\u202e", "\u2066", "\u200b\u2066", "\x02", "\x03")
SHOWN = ("<!channel>", "<!here>", "<@U0EVIL>", "<https://evil.example|logs>")


def texts(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(where, text) for the fallback text and every mrkdwn text object of the blocks."""
    found = [("text", str(message.get("text", "")))]

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{where}[{index}]")
        elif isinstance(node, dict):
            if node.get("type") == "mrkdwn" and isinstance(node.get("text"), str):
                found.append((where, node["text"]))
            for key, value in node.items():
                walk(value, f"{where}.{key}")

    walk(message.get("blocks", []), "blocks")
    return found


def markup_problems(message: Mapping[str, Any], allowed: Collection[str]) -> list[str]:
    """What Slack would act on in the message besides the `allowed` mentions, where it is."""
    problems = []
    for where, text in texts(message):
        for sequence in re.findall(r"<[^>]*>?", text):
            if sequence not in allowed:
                problems.append(f"{where}: control sequence {sequence!r}")
        if re.search(r"&(?!amp;|lt;|gt;)", text):
            problems.append(f"{where}: a bare & (Slack would read an entity)")
        if where != "text" and text.count("```") % 2:
            problems.append(f"{where}: an unbalanced code block")
        if "\x02" in text or "\x03" in text:
            problems.append(f"{where}: a control character shown (a marker imitated)")
        if "\u202e" in text or "\u2066" in text:
            problems.append(f"{where}: a bidirectional control shown")
    return problems
