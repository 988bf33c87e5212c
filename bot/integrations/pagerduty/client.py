"""The one HTTP call the Events API v2 takes: `POST /v2/enqueue` with a JSON event
(PagerDuty/developer-docs/docs/events-API-v2/02-Trigger-Events.md). Says what came back, never
raises for PagerDuty's trouble: a timeout or a dropped connection is "no answer" (the event may
have been taken; the same `dedup_key` makes sending it again harmless).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

log = logging.getLogger(__name__)

TIMEOUT = 10.0  # seconds for one event: PagerDuty answers an enqueue at once


@dataclass(frozen=True)
class Answer:
    """PagerDuty's answer: its HTTP status (None: none came), and the `errors` of a 400."""

    status: int | None
    errors: tuple[str, ...] = field(default=())
    detail: str = ""  # what went wrong, for the log (never the event: it holds the key)


class EventsClient:
    """Sends events to `enqueue_url`, one at a time, each within `TIMEOUT` (or less)."""

    def __init__(self, enqueue_url: str, *, timeout: float = TIMEOUT) -> None:
        self._url = enqueue_url
        self._timeout = timeout

    async def enqueue(self, body: Mapping[str, Any], *, within: float | None = None) -> Answer:
        """POST `body`; `within`: seconds left to act (a deposed Lease holder's call must end
        before its successor acts)."""
        seconds = self._timeout if within is None else max(0.1, min(self._timeout, within))
        timeout = aiohttp.ClientTimeout(total=seconds)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(self._url, json=dict(body)) as response,
            ):
                text = await response.text()
                return Answer(response.status, _errors(text), f"HTTP {response.status}")
        except (TimeoutError, aiohttp.ClientError) as e:
            return Answer(None, (), f"no answer: {type(e).__name__}: {e}")


def _errors(text: str) -> tuple[str, ...]:
    """The `errors` list of a 400's body (`{"status": "invalid event", "errors": [...]}`)."""
    try:
        body = json.loads(text)
    except ValueError:
        return ()
    found = body.get("errors") if isinstance(body, dict) else None
    return tuple(str(e) for e in found) if isinstance(found, list) else ()
