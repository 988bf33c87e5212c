"""How results look in Slack: Block Kit dicts plus a plain-text fallback, always within limits.

Pure: plain dicts (easy to assert on), no Slack library. `fit_message` is the one place every
message passes through: it escapes the fallback `text` and every mrkdwn text (so no text from
the cluster or a user can mention, link or broadcast), then enforces Slack's limits, truncating
with a visible note instead of letting Slack reject a reply. The only mentions are the bot's
own, made with `mention` and formatted there, at the last step, from the IDs they hold.
"""

from __future__ import annotations

import json
import re
from typing import Any, overload

from bot.core.models import Health
from bot.core.rich import Mention, Rich, rich_cut, rich_text
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
REPLAY_UNKNOWN = (
    "kai-chatops cannot tell just now whether this request was already handled (its memory of "
    "requests cannot be reached), so nothing was changed. Try again in a moment."
)
GENERIC_FAILURE = (
    "Something went wrong inside kai-chatops while handling this; nothing was changed. "
    "The details are in the service log."
)


# Mentions are data (`bot.core.rich`) until `fit_message` formats them, after escaping every
# piece of text around them: no string, however made, can become one. Invisible characters
# (C0 controls, bidirectional controls, zero-width characters) can hide or reorder what a reader
# sees, so they are removed. See https://api.slack.com/reference/surfaces/formatting#escaping.
_USER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")
_GROUP_ID = re.compile(r"S[A-Z0-9]{1,20}")
_UNESCAPED = re.compile(r"&(?!amp;|lt;|gt;)|<|>")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = re.compile(f"[{_CONTROLS}\u200c\u200d\u2060\ufeff]")  # ours: only U+200B, below
_INVISIBLE = re.compile(f"[{_CONTROLS}\u200b-\u200d\u2060\ufeff]")
_FENCE = "```"
_BROKEN_FENCE = "``\u200b`"  # shows as three backticks, cannot close a code block

Text = str | Rich


def escape(text: str) -> str:
    """Text shown exactly as written: invisible characters removed, Slack's control characters
    escaped (&, <, >), and code fences broken so text put inside a code block cannot end it.
    (`fit_message` makes every message safe whatever its parts did; this keeps a literal `&amp;`
    and code blocks exact.)"""
    escaped = _INVISIBLE.sub("", text)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace(_FENCE, _BROKEN_FENCE)


def mention(entry: str) -> Rich:
    """A mention the bot makes on its own account: a user ID (`U…`, `W…`) or a user-group ID
    (`S…`); anything else stays text. Formatted by `fit_message`, the last step.

    The one door for mentions: the requester of a change, an operator list, and the mentions
    configured for alerts (`alerts.mention`, user-group handles resolved to IDs by the caller).
    """
    return Rich((Mention(entry),))


def neutralise(text: Text) -> str:
    """mrkdwn that links, mentions and broadcasts nothing but the bot's own `mention`s.

    Every `<`, `>` and bare `&` of the text is escaped (an entity already escaped stays as it
    is, so escaping twice shows the same) and invisible characters removed; then the mentions,
    which are not text, are formatted from their IDs.
    """
    if isinstance(text, str):
        return _escape_once(text)
    return "".join(_escape_once(p) if isinstance(p, str) else _format(p) for p in text.parts)


def _format(who: Mention) -> str:
    if _USER_ID.fullmatch(who.entry):
        return f"<@{who.entry}>"
    if _GROUP_ID.fullmatch(who.entry):
        return f"<!subteam^{who.entry}>"
    return _escape_once(who.entry)


def _escape_once(text: str) -> str:
    return _UNESCAPED.sub(lambda m: _ENTITIES[m.group()[0]], _HIDDEN.sub("", text))


def _as_plain(text: Text) -> str:
    """plain_text shows no markup: a mention becomes its ID."""
    if isinstance(text, str):
        return _HIDDEN.sub("", text)
    return "".join(_HIDDEN.sub("", p) if isinstance(p, str) else p.entry for p in text.parts)


def section(text: Text) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(text: Text) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def header(text: Text) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def text_message(text: Text, *, mrkdwn: Text | None = None) -> Message:
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
    """A user-facing error: the message as it is, marked as a problem (with its mentions, when
    it was raised with a `Rich` message: `errors.UserError.rich`)."""
    rich = getattr(error, "rich", None)
    if isinstance(rich, Rich):
        return text_message(rich, mrkdwn=rich_text(":warning: ", rich))
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
    fallback = message.get("text", "")
    text = neutralise(fallback if isinstance(fallback, Rich) else str(fallback))
    text = truncate(text, slack_limits.MAX_MESSAGE_TEXT)
    return {**message, "text": text, "blocks": blocks}


def json_size(value: Any) -> int:
    """Bytes of `value` as JSON the way it is sent (non-ASCII as \\u escapes), mentions as
    `fit_message` formats them."""
    return len(json.dumps(neutralise(value) if isinstance(value, Rich) else value))


def fit_view(view: dict[str, Any]) -> dict[str, Any]:
    """The view within Slack's limits for views (100 blocks, 250 kB of JSON), measured before
    `views.publish`: blocks past them dropped from the end, with a context block saying how
    many. (Each part of a view keeps its own budget; this is the last fence.)"""
    blocks = list(view.get("blocks") or [])
    if (
        len(blocks) <= slack_limits.MAX_VIEW_BLOCKS
        and json_size(view) <= slack_limits.MAX_VIEW_BYTES
    ):
        return view
    kept = blocks[: slack_limits.MAX_VIEW_BLOCKS - 1]
    while json_size(_cut_view(view, kept, len(blocks))) > slack_limits.MAX_VIEW_BYTES:
        kept.pop()
    return _cut_view(view, kept, len(blocks))


def _cut_view(view: dict[str, Any], kept: list[Block], total: int) -> dict[str, Any]:
    hidden = total - len(kept)
    note = context(f"… {hidden} more blocks not shown here (a view holds at most 100, 250 kB).")
    return {**view, "blocks": [*kept, *neutralise_blocks([note])]}


def neutralise_blocks(blocks: list[Block]) -> list[Block]:
    """Every text object escaped as `fit_message` escapes a message's: for views (the Home tab),
    which are published, not posted, and so do not pass through `fit_message`."""
    return [_neutralise_texts(block) for block in blocks]


def _neutralise_texts(node: Any) -> Any:
    """Every text object inside a block, escaped: mrkdwn by `neutralise`, plain_text plain."""
    if isinstance(node, list):
        return [_neutralise_texts(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _neutralise_texts(value) for key, value in node.items()}
    if isinstance(found.get("text"), str | Rich) and found.get("type") == "mrkdwn":
        found["text"] = neutralise(found["text"])
    elif isinstance(found.get("text"), str | Rich) and found.get("type") == "plain_text":
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


@overload
def truncate(text: str, limit: int) -> str: ...
@overload
def truncate(text: Rich, limit: int) -> Rich: ...
def truncate(text: Text, limit: int) -> Text:
    """`text` within `limit` characters, ending with a visible note when it was cut."""
    if isinstance(text, Rich):
        return rich_cut(text, limit, TRUNCATED)
    if len(text) <= limit:
        return text
    return text[: limit - len(TRUNCATED)] + TRUNCATED


def truncate_mrkdwn(text: str, limit: int) -> str:
    """Like `truncate`, but closes a code block left open by the cut."""
    if len(text) <= limit:
        return text
    cut = truncate(text, limit - 3)
    return cut + "```" if cut.count("```") % 2 else cut
