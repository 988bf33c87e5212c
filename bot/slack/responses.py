"""Posts to response_urls over one pool of connections, kept open between replies.

Bolt's own `respond` opens a new HTTP session for every post (bolt-python
slack_bolt/context/respond/async_respond.py builds an `AsyncWebhookClient` without a session,
and slack_sdk slack_sdk/webhook/async_client.py then opens and closes one per call): a new
connection, and in production a new TLS handshake with hooks.slack.com, for every reply. With
many commands at once that work competes with the acks still to be sent. Here every post
reuses the connections of one `aiohttp.ClientSession`, which `slack_sdk` accepts as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiohttp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.webhook.async_client import AsyncWebhookClient
from slack_sdk.webhook.webhook_response import WebhookResponse

POST_TIMEOUT = 30  # seconds, slack_sdk's default for a webhook post


class ResponseUrls:
    """The pool every response_url post of this process goes through; `close()` at shutdown."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def respond_to(self, response_url: str) -> PooledRespond:
        """Bolt's `respond` for one request, posting through the pool."""
        return PooledRespond(response_url=response_url, pool=self)

    def session(self) -> aiohttp.ClientSession:
        """The shared session, opened on first use (it must be made inside the event loop)."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class PooledRespond(AsyncRespond):
    """`respond(...)` as Bolt's, with its connections taken from a `ResponseUrls` pool."""

    def __init__(self, *, response_url: str, pool: ResponseUrls) -> None:
        super().__init__(response_url=response_url)
        self._pool = pool

    async def __call__(  # type: ignore[override]
        self,
        text: str | dict[str, Any] = "",
        blocks: Sequence[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> WebhookResponse:
        """Post a message: `text` and the other fields as Bolt's `respond` takes them, or one
        whole message as a dict."""
        message = text if isinstance(text, dict) else message_of(text, blocks, fields)
        client = AsyncWebhookClient(
            url=str(self.response_url), timeout=POST_TIMEOUT, session=self._pool.session()
        )
        return await client.send_dict(message)


def message_of(
    text: str, blocks: Sequence[dict[str, Any]] | None, fields: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body of a post: the text, the blocks when there are any, and every other
    field that was given (Bolt leaves out those that are None, and empty block lists)."""
    message: dict[str, Any] = {"text": text}
    if blocks:
        message["blocks"] = list(blocks)
    message |= {name: value for name, value in fields.items() if value is not None}
    return message
