"""Alert messages into Slack: root posts, thread replies and root edits, retried and counted.

429s are waited out by the Slack client itself (`Retry-After`, then the same call again, so
order holds). Any other failure is retried here with backoff, then logged and counted as an
error; nothing raises. Rendering is `bot.alerts.render`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from bot.alerts import render as render_alerts
from bot.alerts.machine import Note
from bot.alerts.model import AlertState
from bot.core.metrics import Metrics
from bot.slack import blocks as render
from bot.slack.gateway import SlackUnavailable

log = logging.getLogger(__name__)

SLACK_BACKOFFS = (1.0, 2.0, 4.0)  # seconds between tries of a failed Slack call
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class MessageSender(Protocol):
    """Posting and editing messages (satisfied by `bot.slack.gateway.SlackGateway`)."""

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str: ...

    async def update(self, channel: str, ts: str, message: Mapping[str, Any]) -> None: ...


class AlertMessages:
    """One alert's messages through a sender; a missing sender (no Slack) sends nothing."""

    def __init__(
        self,
        sender: MessageSender | None,
        metrics: Metrics,
        *,
        sleep: Sleep = asyncio.sleep,
        backoffs: Sequence[float] = SLACK_BACKOFFS,
    ) -> None:
        self._sender = sender
        self._metrics = metrics
        self._sleep = sleep
        self._backoffs = tuple(backoffs)

    async def post_root(self, alert: AlertState) -> str | None:
        """The root's ts, or None when it could not be posted."""
        sender, message = self._sender, render_alerts.root_message(alert)
        if sender is None:
            return None
        # A root whose post may have landed is not posted again here: the alert stays "posting"
        # and the next check posts it once more, saying an earlier copy may exist.
        return await self._send(
            f"post alert {alert.alert_id}",
            lambda: sender.post(alert.root_channel, message),
            retry_ambiguous=False,
        )

    async def post_notice(self, channel: str, text: str) -> None:
        """A plain message in the alert channel, outside any alert's thread."""
        sender = self._sender
        if sender is not None:
            await self._send("notice", lambda: sender.post(channel, render.text_message(text)))

    async def post_reply(self, alert: AlertState, note: Note) -> None:
        sender, message = self._sender, render_alerts.reply_message(alert, note)
        if sender is None:
            return
        what = f"reply ({note.kind.value}) to alert {alert.alert_id}"
        await self._send(
            what, lambda: sender.post(alert.root_channel, message, thread_ts=alert.root_ts)
        )

    async def edit_root(self, alert: AlertState) -> None:
        sender, message = self._sender, render_alerts.root_message(alert)
        if sender is None:
            return
        await self._send(
            f"edit alert {alert.alert_id}",
            lambda: sender.update(alert.root_channel, alert.root_ts, message),
        )

    async def _send(
        self, what: str, call: Callable[[], Awaitable[T]], *, retry_ambiguous: bool = True
    ) -> T | None:
        """The call's result, after retries with backoff; None when Slack kept failing."""
        for attempt, delay in enumerate((*self._backoffs, None), start=1):
            try:
                result = await call()
            except SlackUnavailable as e:
                if delay is None or (e.ambiguous and not retry_ambiguous):
                    self._metrics.slack_sends.labels("error").inc()
                    log.error("%s: giving up after %d tries: %s", what, attempt, e)
                    return None
                log.warning("%s: try %d failed (%s); again in %.0fs", what, attempt, e, delay)
                await self._sleep(delay)
                continue
            self._metrics.slack_sends.labels("ok").inc()
            return result
        return None
