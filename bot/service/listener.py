"""The service's listening socket, bounded: a request's header section must be in within
`HEADER_SECONDS`, and at most `MAX_CONNECTIONS` connections are open at once.

aiohttp's own setting where there is one: `keepalive_timeout` (aiohttp web_protocol.py
`RequestHandler`) arms a timer when a connection is made, which the bytes that come in do not
reset, and closes the connection if it is still waiting for a whole request then: a slow or
endless header section is cut off, as a slow body is (`bot.service.endpoint`). It is the
keep-alive timer as well, so each answer closes its connection (`Connection: close`): a proxy
in front never sends a request on a connection we are about to close. aiohttp has no cap on
open connections (`TCPSite`'s `backlog` is the kernel's queue of connections not yet
accepted), so the listener counts them itself: past the cap a connection is answered 503 and
closed before aiohttp reads a byte of it. `/healthz`, `/readyz` and `/metrics` share the socket.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

HEADER_SECONDS = 3.0  # Slack's ack window: a request still incomplete then cannot be answered
MAX_CONNECTIONS = 256  # Slack's bursts are tens of requests; each connection costs ~20 kB
REFUSED = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def make_runner(app: web.Application) -> web.AppRunner:
    """The runner of `app`, every answer closing its connection, and connections cut off when
    no whole request came within `HEADER_SECONDS`."""
    app.on_response_prepare.append(_close_after)
    return web.AppRunner(app, access_log=None, keepalive_timeout=HEADER_SECONDS)


async def listen(
    runner: web.AppRunner, host: str, port: int, cap: int = MAX_CONNECTIONS
) -> asyncio.Server:
    """Accept connections for `runner` (set up) on `host:port`, at most `cap` open at once."""
    assert runner.server is not None  # set up first
    loop = asyncio.get_running_loop()
    return await loop.create_server(Capped(runner.server, cap), host, port, reuse_address=True)


async def _close_after(_: web.Request, response: web.StreamResponse) -> None:
    """Close the connection after this answer, and say so (aiohttp computes its own
    `Connection` header before this hook runs, and writes the headers after it)."""
    response.force_close()
    response.headers["Connection"] = "close"


class Capped:
    """A protocol factory: aiohttp's handler for each connection while fewer than `cap` are
    open, else a refusal."""

    def __init__(self, server: web.Server, cap: int) -> None:
        self.server, self.cap = server, cap
        self.open = 0

    def __call__(self) -> asyncio.Protocol:
        if self.open >= self.cap:
            return _Refused()
        self.open += 1
        return _Counted(self.server(), self)


class _Counted(asyncio.Protocol):
    """aiohttp's handler for one connection, handed every event; its end counted."""

    def __init__(self, handler: Any, capped: Capped) -> None:
        self.handler, self.capped = handler, capped

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        return bool(self.handler.eof_received())

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.capped.open -= 1
        self.handler.connection_lost(exc)


class _Refused(asyncio.Protocol):
    """A connection past the cap: 503, closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(REFUSED)
        transport.close()
