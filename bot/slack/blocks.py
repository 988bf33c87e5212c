"""How results look in Slack: Block Kit dicts plus a plain-text fallback, always within limits.

Pure: plain dicts (easy to assert on), no Slack library. `fit_message` is the one place every
message passes through: it escapes the fallback `text` and every mrkdwn text (so no text from
the cluster or a user can mention, link or broadcast), then enforces Slack's limits, truncating
with a visible note instead of letting Slack reject a reply. The only mentions that survive are
the bot's own, made with `mention`.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from bot.core.models import Health
from bot.slack import limits as slack_limits

Block = dict[str, Any]
Message = dict[str, Any]

ICONS = {
    Health.HEALTHY: ":white_check_mark:",
    Health.SUSPENDED: ":double_vertical_bar:",
    Health.PROGRESSING: ":hourglass_flowing_sand:",
    Health.UNKNOWN: ":grey_question:",
    Health.DEGRADED: ":red_circle:",
    Health.MISSING: ":x:",
}
TRUNCATED = "… (truncated)"
RESTARTING = "kai-chatops is restarting; nothing was done. Try again in a few seconds."
GENERIC_FAILURE = (
    "Something went wrong inside kai-chatops while handling this; nothing was changed. "
    "The details are in the service log."
)


# The bot's own mentions travel through rendering sealed, and only `fit_message` opens them,
# after escaping everything else: the seal is random per process, so text from the cluster or a
# user cannot forge one. See https://api.slack.com/reference/surfaces/formatting#escaping.
_SEAL = secrets.token_hex(6)
_SEALED = re.compile(f"\x02{_SEAL}:([^\x03]*)\x03")
_USER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")
_GROUP_ID = re.compile(r"S[A-Z0-9]{1,20}")
_UNESCAPED = re.compile(r"&(?!amp;|lt;|gt;)|<|>")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_FENCE = "```"
_BROKEN_FENCE = "``\u200b`"  # shows as three backticks, cannot close a code block


def escape(text: str) -> str:
    """Text shown exactly as written: Slack's control characters escaped (&, <, >), and code
    fences broken so text put inside a code block cannot end it. (`fit_message` makes every
    message safe whatever its parts did; this keeps a literal `&amp;` and code blocks exact.)"""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace(_FENCE, _BROKEN_FENCE)


def mention(entry: str) -> str:
    """A mention the bot makes on its own account: a user ID (`U…`, `W…`) or a user-group ID
    (`S…`); anything else stays text. Only these survive `fit_message`.

    The one door for mentions: the requester of a change, an operator list, and the mentions
    configured for alerts (`alerts.mention`, user-group handles resolved to IDs by the caller).
    """
    if _USER_ID.fullmatch(entry):
        return f"\x02{_SEAL}:@{entry}\x03"
    if _GROUP_ID.fullmatch(entry):
        return f"\x02{_SEAL}:!subteam^{entry}\x03"
    return entry


def neutralise(text: str) -> str:
    """mrkdwn that links, mentions and broadcasts nothing but the bot's own `mention`s.

    Every `<`, `>` and bare `&` is escaped (an entity already escaped stays as it is, so escaping
    twice shows the same), then the sealed mentions are opened.
    """
    return _SEALED.sub(r"<\1>", _escape_once(text))


def _escape_once(text: str) -> str:
    return _UNESCAPED.sub(lambda m: _ENTITIES[m.group()[0]], text)


def _as_plain(text: str) -> str:
    """plain_text shows no markup: a sealed mention becomes its ID."""
    return _SEALED.sub(lambda m: m.group(1).lstrip("@!").removeprefix("subteam^"), text)


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def text_message(text: str, *, mrkdwn: str | None = None) -> Message:
    """A short reply: one section, with `text` as the fallback."""
    return fit_message({"text": text, "blocks": [section(mrkdwn if mrkdwn is not None else text)]})


CONFIRM_ACTION = "kai_confirm"
CANCEL_ACTION = "kai_cancel"


def confirmation_message(title: str, lines: list[str], sealed: str) -> Message:
    """What a change will do, with Confirm and Cancel buttons (the change rides in `sealed`)."""
    body = "\n".join(escape(line) for line in lines)
    buttons = {
        "type": "actions",
        "block_id": "kai_confirmation",
        "elements": [
            button("Confirm", CONFIRM_ACTION, sealed, style="primary"),
            button("Cancel", CANCEL_ACTION, sealed),
        ],
    }
    blocks = [section(f"*{escape(title)}*\n{body}"), buttons, context("Expires in 5 minutes.")]
    return fit_message({"text": f"{title}: confirm or cancel", "blocks": blocks})


def button(label: str, action_id: str, value: str, *, style: str | None = None) -> Block:
    element: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action_id,
        "value": value,
    }
    return element | ({"style": style} if style else {})


def help_message(help_text: str) -> Message:
    """`/kai help`: every command, one line each."""
    return text_message(help_text, mrkdwn=f"```{escape(help_text)}```")


def error_message(error: BaseException) -> Message:
    """A user-facing error: the message as it is, marked as a problem."""
    return text_message(str(error), mrkdwn=f":warning: {escape(str(error))}")


def usage_message(problem: str, usage: str) -> Message:
    """A malformed command: what is wrong, then how that subcommand is used."""
    text = f"{problem}\n{usage}".strip()
    return text_message(text, mrkdwn=f":warning: {escape(problem)}\n```{escape(usage)}```")


def fit_message(message: Message) -> Message:
    """The message escaped (`neutralise`: the fallback text and every mrkdwn text object), then
    cut to Slack's limits: block count, section length, message text length."""
    blocks = [_fit_block(_neutralise_texts(b)) for b in message.get("blocks", [])]
    if len(blocks) > slack_limits.MAX_BLOCKS:
        hidden = len(blocks) - (slack_limits.MAX_BLOCKS - 1)
        blocks = blocks[: slack_limits.MAX_BLOCKS - 1]
        blocks.append(context(f"… {hidden} more not shown here (Slack shows at most 50 blocks)."))
    text = truncate(neutralise(str(message.get("text", ""))), slack_limits.MAX_MESSAGE_TEXT)
    return {**message, "text": text, "blocks": blocks}


def neutralise_blocks(blocks: list[Block]) -> list[Block]:
    """Every text object escaped as `fit_message` escapes a message's: for views (the Home tab),
    which are published, not posted, and so do not pass through `fit_message`."""
    return [_neutralise_texts(block) for block in blocks]


def _neutralise_texts(node: Any) -> Any:
    """Every text object inside a block, escaped: mrkdwn by `neutralise`, plain_text unsealed."""
    if isinstance(node, list):
        return [_neutralise_texts(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _neutralise_texts(value) for key, value in node.items()}
    if isinstance(found.get("text"), str) and found.get("type") == "mrkdwn":
        found["text"] = neutralise(found["text"])
    elif isinstance(found.get("text"), str) and found.get("type") == "plain_text":
        found["text"] = _as_plain(found["text"])
    return found


def _fit_block(block: Block) -> Block:
    if block.get("type") == "section" and "text" in block:
        inner = dict(block["text"])
        inner["text"] = truncate_mrkdwn(inner["text"], slack_limits.MAX_SECTION_TEXT)
        return {**block, "text": inner}
    if block.get("type") == "context":
        elements = [_fit_text_element(e) for e in block.get("elements", [])]
        return {**block, "elements": elements[: slack_limits.MAX_CONTEXT_ELEMENTS]}
    if block.get("type") == "header":
        inner = dict(block["text"])
        inner["text"] = truncate(inner["text"], slack_limits.MAX_HEADER_TEXT)
        return {**block, "text": inner}
    return block


def _fit_text_element(element: Block) -> Block:
    if "text" in element and isinstance(element["text"], str):
        return {**element, "text": truncate(element["text"], slack_limits.MAX_TEXT_OBJECT)}
    return element


def truncate(text: str, limit: int) -> str:
    """`text` within `limit` characters, ending with a visible note when it was cut."""
    if len(text) <= limit:
        return text
    return text[: limit - len(TRUNCATED)] + TRUNCATED


def truncate_mrkdwn(text: str, limit: int) -> str:
    """Like `truncate`, but closes a code block left open by the cut."""
    if len(text) <= limit:
        return text
    cut = truncate(text, limit - 3)
    return cut + "```" if cut.count("```") % 2 else cut
