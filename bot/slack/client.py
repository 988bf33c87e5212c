"""The one Slack Web API client of the service: its timeout, and how 429s are met and counted.

The gateway posts through it, and the Bolt app and the readiness probe share it (and its pool
of connections); built once, by `bot.service.deps.build_deps`.
"""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.metrics import Metrics

SLACK_API_URL = "https://slack.com/api/"
SLACK_TIMEOUT = 30  # seconds for one Web API call (slack_sdk's default)


def build_client(
    bot_token: str, api_url: str | None, metrics: Metrics, *, timeout: float = SLACK_TIMEOUT
) -> AsyncWebClient:
    """The Slack Web API client; 429s are counted, then retried after `Retry-After`, never
    dropped.

    Only 429s: slack_sdk's default connection-error handler re-sends a call after a dropped
    connection, which for `chat.postMessage` posts the message twice when the first one landed.
    Writes are retried by their callers, which know whether a retry is safe.
    """
    base_url = api_url or SLACK_API_URL
    client = AsyncWebClient(
        token=bot_token,
        base_url=base_url.rstrip("/") + "/",
        timeout=timeout,  # type: ignore[arg-type]
    )
    client.retry_handlers = [
        _RateLimitCounter(metrics),
        AsyncRateLimitErrorRetryHandler(max_retry_count=5),
    ]
    return client


class _RateLimitCounter(AsyncRetryHandler):
    """Counts every 429 from Slack (`kai_chatops_slack_sends{outcome="rate_limited"}`).

    Never retries itself: the rate-limit handler after it waits `Retry-After` and retries.
    """

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(max_retry_count=0)
        self._metrics = metrics

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and response.status_code == 429:
            self._metrics.slack_sends.labels("rate_limited").inc()
        return False
