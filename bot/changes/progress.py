"""A change made at once, answered in place: "reconciling…" on the response_url as soon as it
starts, then that message replaced by the result.

Once the progress reply is showing, every ending must replace it (an error too, and a
shutdown), or it would stay there forever. Without a response_url, or when the progress reply
could not be posted, the result is the only reply, as any other command's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.changes import render
from bot.core import errors
from bot.slack import blocks
from bot.slack.blocks import Message

log = logging.getLogger(__name__)
Respond = Callable[..., Awaitable[Any]]  # Bolt's `respond`: posts to the response_url


class InPlace:
    """One change's reply: whether it has started, and whether its progress reply shows."""

    def __init__(self, respond: Respond | None, *, started: bool = False) -> None:
        self._respond = respond
        self.started = started  # from here on, an error is on the change's record
        self.showing = False

    async def start(self, progress: Message) -> None:
        """The change starts: post `progress` (a failed post is logged, the change goes on)."""
        self.started = True
        if self._respond is not None:
            self.showing = await _post(self._respond, progress)

    async def replacing(self, work: Awaitable[Message]) -> Message:
        """The result of `work`, as the replacement of the progress reply when it shows."""
        try:
            result = await work
        except errors.BotError as e:
            if not self.showing:
                raise
            result = blocks.error_message(e)
        except asyncio.CancelledError:
            if self.showing and self._respond is not None:
                await _post(self._respond, render.interrupted())  # the service is stopping
            raise
        except Exception:
            if not self.showing:
                raise
            log.exception("a gitops request failed after its progress reply")
            result = blocks.text_message(blocks.GENERIC_FAILURE)
        if not self.showing:
            return result
        replacing = {key: value for key, value in result.items() if key != "response_type"}
        return {**replacing, "replace_original": True}


async def _post(respond: Respond, message: Message) -> bool:
    try:
        await respond(**message)
    except Exception as e:  # a lost progress note must not lose the change
        log.warning("could not post the progress reply: %s", e)
        return False
    return True
