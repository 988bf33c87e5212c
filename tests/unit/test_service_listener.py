"""The listener's cap on open connections (issue 36, finding 5), counted as asyncio reports
connections made and lost; each connection's events handed to aiohttp's handler as they come.
In-process objects: a stand-in for aiohttp's handler factory, a transport that records."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.service.listener import Capped


class Handler:
    """What aiohttp's handler was told, in order."""

    def __init__(self) -> None:
        self.told: list[tuple[str, Any]] = []

    def connection_made(self, transport: Any) -> None:
        self.told.append(("made", transport))

    def data_received(self, data: bytes) -> None:
        self.told.append(("data", data))

    def eof_received(self) -> bool:
        self.told.append(("eof", None))
        return True

    def pause_writing(self) -> None:
        self.told.append(("pause", None))

    def resume_writing(self) -> None:
        self.told.append(("resume", None))

    def connection_lost(self, exc: Exception | None) -> None:
        self.told.append(("lost", exc))


class Transport(asyncio.WriteTransport):
    def __init__(self) -> None:
        super().__init__()
        self.written, self.closed = b"", False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True


def factory() -> tuple[Capped, list[Handler]]:
    made: list[Handler] = []

    def server() -> Handler:
        made.append(Handler())
        return made[-1]

    return Capped(server, 2), made  # type: ignore[arg-type]


def test_connections_past_the_cap_are_answered_503_and_closed_and_a_lost_one_frees_a_slot() -> None:
    capped, made = factory()
    first, second = capped(), capped()
    third = capped()
    transport = Transport()
    third.connection_made(transport)

    assert len(made) == 2 and capped.open == 2
    assert transport.written == (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    assert transport.closed
    first.connection_made(Transport())
    first.connection_lost(None)
    assert capped.open == 1
    fourth = capped()
    assert len(made) == 3 and capped.open == 2 and fourth is not third
    assert second is not first


def test_every_event_of_a_counted_connection_reaches_aiohttps_handler_in_order() -> None:
    capped, made = factory()
    protocol, transport, error = capped(), Transport(), ConnectionResetError()

    protocol.connection_made(transport)
    protocol.data_received(b"GET / HTTP/1.1\r\n")
    protocol.pause_writing()
    protocol.resume_writing()
    assert protocol.eof_received() is True
    protocol.connection_lost(error)

    assert made[0].told == [
        ("made", transport),
        ("data", b"GET / HTTP/1.1\r\n"),
        ("pause", None),
        ("resume", None),
        ("eof", None),
        ("lost", error),
    ]
    assert capped.open == 0
