"""`Run health check` on an alert's root: the cluster's health report (one check per cluster
at a time, shared with `/kai health`), posted in the alert's thread for everyone to see, and a
short note for the person who clicked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from bot.config.settings import Settings
from bot.core.models import HealthReport
from bot.health import render, usecase
from bot.kube.ports import KubeReader
from bot.slack import blocks
from bot.slack.blocks import Message

# One health check per key at a time (`bot.service.singleflight.SingleFlight.run`).
Shared = Callable[[str, Callable[[], Awaitable[HealthReport]]], Awaitable[HealthReport]]


class ThreadPoster(Protocol):
    """Posting in a thread (`bot.slack.gateway.SlackGateway`)."""

    async def post(
        self, channel: str, message: Mapping[str, Any], *, thread_ts: str | None = None
    ) -> str: ...


async def health_in_thread(
    kube: KubeReader,
    thread: tuple[str, str],
    settings: Settings,
    clock: Callable[[], datetime],
    shared: Shared,
    slack: ThreadPoster,
) -> Message:
    """The report of `kube`'s cluster posted in `thread` (channel, ts of the alert's root); the
    note that says so, or the report itself for the clicker alone when the click did not say
    where the alert is.

    Raises:
        SlackUnavailable: the report could not be posted.
    """
    report = await shared(kube.cluster, lambda: usecase.check_health(kube, settings, clock()))
    message = render.health_message(report)
    channel, thread_ts = thread
    if not channel or not thread_ts:
        return {**message, "response_type": "ephemeral"}
    await slack.post(channel, message, thread_ts=thread_ts)
    note = f"Posted the health report of {kube.cluster} in the alert's thread."
    return {**blocks.text_message(note), "response_type": "ephemeral"}
