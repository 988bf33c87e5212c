"""The Socket Mode side of the emulator: the `/socket` websocket, envelopes out, acks in.

Protocol as slack_sdk's SocketModeClient expects it: `hello` on connect, envelopes
`{envelope_id, type, payload, accepts_response_payload}`, acks `{envelope_id, payload?}`, and
`{"type": "disconnect"}` asking the client to reconnect through `apps.connections.open`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from testbed.slackemu.records import SocketAck
from testbed.slackemu.waiting import ChangeSignal


@dataclass
class SocketConnection:
    """One websocket the client opened; `last_frame_at` is when it last sent a text frame."""

    number: int
    ws: web.WebSocketResponse
    connected_at: float
    last_frame_at: float

    @property
    def is_open(self) -> bool:
        """Whether frames can still be sent on it."""
        return not self.ws.closed


class SocketHub:
    """Accepts Socket Mode connections and carries envelopes to the newest open one."""

    def __init__(
        self,
        *,
        app_id: str,
        changes: ChangeSignal,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app_id = app_id
        self._changes = changes
        self._clock = clock
        self._tickets: set[str] = set()
        self._pending: dict[str, asyncio.Future[SocketAck]] = {}
        self.connections: list[SocketConnection] = []
        self.acks: list[SocketAck] = []

    def issue_ticket(self) -> str:
        """A ticket for the `/socket?ticket=...` URL that `apps.connections.open` hands out."""
        ticket = secrets.token_hex(12)
        self._tickets.add(ticket)
        return ticket

    @property
    def open_connections(self) -> list[SocketConnection]:
        """The connections still open, oldest first."""
        return [c for c in self.connections if c.is_open]

    @property
    def is_connected(self) -> bool:
        """Whether a client is connected now."""
        return bool(self.open_connections)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """The `/socket` route: upgrade, say hello, then read acks until the socket closes."""
        if request.query.get("ticket") not in self._tickets:
            return web.Response(status=401, text="invalid_ticket")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        now = self._clock()
        connection = SocketConnection(len(self.connections) + 1, ws, now, now)
        self.connections.append(connection)
        try:
            await ws.send_json(self._hello())
            self._changes.notify()
            await self._read_frames(connection)
        finally:
            self._changes.notify()
        return ws

    async def send_envelope(
        self,
        envelope_type: str,
        payload: Mapping[str, Any],
        *,
        accepts_response_payload: bool,
        ack_timeout: float,
    ) -> tuple[str, SocketAck | None]:
        """Send one envelope to the newest open connection and wait for its ack.

        Returns:
            The envelope id, and the ack, or None when none came within `ack_timeout` seconds
            (Bolt sends no ack when it answers anything but 200, e.g. an unhandled request).

        Raises:
            ConnectionError: no client is connected.
        """
        connection = self._newest_open()
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": dict(payload),
            "accepts_response_payload": accepts_response_payload,
        }
        future: asyncio.Future[SocketAck] = asyncio.get_running_loop().create_future()
        self._pending[envelope_id] = future
        try:
            await connection.ws.send_json(envelope)
            return envelope_id, await asyncio.wait_for(future, ack_timeout)
        except TimeoutError:
            return envelope_id, None
        finally:
            self._pending.pop(envelope_id, None)

    async def send_frame(self, text: str) -> None:
        """Send one text frame exactly as given (malformed, huge, or an envelope of any shape)
        to the newest open connection; nothing is awaited back.

        Raises:
            ConnectionError: no client is connected.
        """
        await self._newest_open().ws.send_str(text)

    async def disconnect(self, reason: str = "refresh_requested", *, grace: float = 5.0) -> None:
        """Ask every connected client to reconnect, then close what it has not closed itself.

        Slack sends `{"type": "disconnect"}` before it drops a connection; slack_sdk answers by
        opening a new one (via `apps.connections.open`) and closing the old one.
        """
        old = self.open_connections
        for connection in old:
            await connection.ws.send_json(
                {"type": "disconnect", "reason": reason, "debug_info": {"host": "emulator"}}
            )
        try:
            await self._changes.wait_for(
                lambda: all(not c.is_open for c in old), grace, "the client to drop old sockets"
            )
        except TimeoutError:
            await self.drop_connections(old)

    async def drop_connections(self, connections: list[SocketConnection] | None = None) -> None:
        """Close connections abruptly (no `disconnect` message first); all open ones by default."""
        for connection in connections if connections is not None else self.open_connections:
            await connection.ws.close(code=1001, message=b"going away")
        self._changes.notify()

    async def close(self) -> None:
        """Close every connection and forget waiting acks (emulator shutdown)."""
        await self.drop_connections()
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()

    def _newest_open(self) -> SocketConnection:
        connections = self.open_connections
        if not connections:
            raise ConnectionError("no Socket Mode client is connected to the emulator")
        return connections[-1]

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "num_connections": len(self.open_connections),
            "debug_info": {
                "host": "emulator",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": self._app_id},
        }

    async def _read_frames(self, connection: SocketConnection) -> None:
        async for message in connection.ws:
            if message.type != WSMsgType.TEXT:
                continue
            connection.last_frame_at = self._clock()
            self._take_ack(str(message.data))

    def _take_ack(self, text: str) -> None:
        try:
            frame = json.loads(text)
        except json.JSONDecodeError:
            return
        if not isinstance(frame, dict) or "envelope_id" not in frame:
            return
        payload = frame.get("payload")
        ack = SocketAck(
            str(frame["envelope_id"]), payload if isinstance(payload, dict) else None, self._clock()
        )
        self.acks.append(ack)
        future = self._pending.get(ack.envelope_id)
        if future is not None and not future.done():
            future.set_result(ack)
        self._changes.notify()
