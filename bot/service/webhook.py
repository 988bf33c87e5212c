"""`POST /alertmanager`: Alertmanager's webhook (docs/alertmanager.md), served on `--port` in
both modes when `alertmanager` is configured.

The bearer token first: a request without `Authorization: Bearer $ALERTMANAGER_TOKEN` gets 401
and causes nothing else (its body is not even read). Then the body: over `MAX_BODY` bytes 413,
not a version-4 payload 400 (nothing posted either way). A payload saved answers 200; one the
state store could not take answers 503, which Alertmanager retries (notify/util.go `Retrier`:
every 5xx is retried, a 4xx never), and the retry tells nothing twice.
"""

from __future__ import annotations

import hmac
import logging

from aiohttp import web

from bot.alerts.store import StoreUnavailable
from bot.integrations import usecase_alertmanager
from bot.integrations.alertmanager_webhook import BadPayload
from bot.service.deps import Deps

log = logging.getLogger(__name__)

PATH = "/alertmanager"
MAX_BODY = 1024 * 1024  # bytes: a group of a thousand alerts; more is not a notification we keep


class AlertmanagerWebhook:
    """The handler of `POST /alertmanager` for one service."""

    def __init__(self, deps: Deps, token: str) -> None:
        self._deps = deps
        self._expected = f"Bearer {token}".encode()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        given = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(given, self._expected):
            return web.Response(status=401, text="unauthorized\n")
        if (request.content_length or 0) > MAX_BODY:
            return _refused(413, f"the payload is over {MAX_BODY} bytes")
        body = await request.content.read(MAX_BODY + 1)
        if len(body) > MAX_BODY:
            return _refused(413, f"the payload is over {MAX_BODY} bytes")
        deps = self._deps
        try:
            await usecase_alertmanager.receive(
                deps.alerts, deps.settings, deps.kube, body, deps.clock()
            )
        except BadPayload as e:
            return _refused(400, str(e))
        except StoreUnavailable as e:
            log.error("alertmanager webhook: cannot use the state store: %s", e)
            return web.Response(status=503, text="the state store is unavailable; retry\n")
        return web.Response(status=200, text="ok\n")


def _refused(status: int, why: str) -> web.Response:
    log.warning("alertmanager webhook refused (%d): %s", status, why)
    return web.Response(status=status, text=f"{why}\n")
