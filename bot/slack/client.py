"""The one Slack Web API client of the service: its timeout, its budget, and how 429s are met.

The gateway posts through it, and the Bolt app and the readiness probe share it (and its pool
of connections); built once, by `bot.service.deps.build_deps`. Every call first waits for its
method's lane of the shared `bot.slack.budget.Budget`, at the caller's priority; a 429 closes
that lane for its `Retry-After` and the call waits its turn again (it was not carried out).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.metrics import Metrics
from bot.slack import budget
from bot.slack.budget import Budget

SLACK_API_URL = "https://slack.com/api/"
SLACK_TIMEOUT = 30  # seconds for one Web API call (slack_sdk's default)
RATE_LIMIT_TRIES = 6  # a call answered 429 this many times in a row is given up (not applied)
# Methods the budget leaves alone: Socket Mode's connection (its client retries on its own) and
# those with special limits of their own that the service calls once (`auth.test`).
UNBUDGETED = frozenset({"apps.connections.open", "auth.test"})


class SlackNotSent(SlackClientError):
    """The call was never sent: no budget for it before its deadline, or Slack kept saying
    429. Surely not applied."""


class BudgetedClient(AsyncWebClient):
    """An AsyncWebClient whose every call is spent from `budget` first."""

    def __init__(self, *, budget: Budget, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.budget = budget
        self._metrics = metrics

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
        lane = None
        if api_method not in UNBUDGETED:
            lane = self.budget.lane(api_method, _channel_of(kwargs))
        urgency, leaving = budget.current(), budget.watched_call()
        if leaving is not None:
            leaving.asked = True
        for _ in range(RATE_LIMIT_TRIES):
            if lane is not None:
                try:
                    await lane.take(urgency)
                except budget.NotSent as e:
                    raise SlackNotSent(f"{api_method}: {e}") from e
            if leaving is not None:
                leaving.sent = True  # from here on it may reach Slack
            try:
                return await super().api_call(api_method, **kwargs)
            except SlackApiError as e:
                if getattr(e.response, "status_code", 200) != 429 or lane is None:
                    raise
                self._metrics.slack_sends.labels("rate_limited").inc()
                lane.close_for(_retry_after(e))
        raise SlackNotSent(f"{api_method}: Slack kept answering 429 (rate limited)")


def build_client(
    bot_token: str,
    api_url: str | None,
    metrics: Metrics,
    *,
    timeout: float = SLACK_TIMEOUT,
    monotonic: Callable[[], float] = time.monotonic,
) -> BudgetedClient:
    """The Slack Web API client, spending one budget for the whole service.

    No retry handlers: slack_sdk's connection-error handler re-sends a call after a dropped
    connection, which for `chat.postMessage` posts the message twice when the first one landed,
    and its rate-limit handler sleeps inside the call. Writes are retried by their callers,
    which know whether a retry is safe; 429s by `BudgetedClient`, through the lanes.
    """
    base_url = api_url or SLACK_API_URL
    client = BudgetedClient(
        budget=Budget(monotonic=monotonic),
        metrics=metrics,
        token=bot_token,
        base_url=base_url.rstrip("/") + "/",
        timeout=timeout,
    )
    client.retry_handlers = []
    return client


def _channel_of(kwargs: dict[str, Any]) -> str:
    """The channel a call names, wherever slack_sdk put its arguments."""
    for where in ("json", "data", "params"):
        found = kwargs.get(where)
        if isinstance(found, dict) and found.get("channel"):
            return str(found["channel"])
    return ""


def _retry_after(error: SlackApiError) -> float:
    headers = getattr(error.response, "headers", {}) or {}
    value = headers.get("Retry-After") or headers.get("retry-after") or "1"
    try:
        return max(1.0, float(value))
    except (TypeError, ValueError):
        return 1.0
