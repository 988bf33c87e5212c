"""The pipeline's own words: a Cancel, a reply cut off by a restart, a request asked in a
direct message said in the alert channel. Pure."""

from __future__ import annotations

from bot.core.rich import Rich, rich_text
from bot.slack import blocks
from bot.slack.blocks import Message

INTERRUPTED = (
    "kai-chatops restarted while waiting for the controller; the request itself was made. "
    "Check the object, or run the command again to follow it."
)


def cancelled(user_id: str) -> Message:
    """What replaces a Confirm once Cancel is clicked."""
    note = rich_text("Cancelled by ", blocks.mention(user_id), "; nothing was changed.")
    return {**blocks.text_message(note), "replace_original": True}


def interrupted() -> Message:
    """What replaces a progress reply when the service stops before the request ends."""
    return {**blocks.text_message(INTERRUPTED), "replace_original": True}


def request_record(user_id: str, action: str, where: str, how: str) -> Rich:
    """A request made in a direct message, said in the alert channel: who, what, how it ended."""
    asked = f" asked for a {action} of {blocks.escape(where)}"
    return rich_text(
        blocks.mention(user_id), asked, f" (in a direct message): {blocks.escape(how)}"
    )
