"""A watch stream (of one object or a collection): read in a thread of the watch lane, decoded
on the event loop.

The thread side sends the client's GET with `watch=true` and hands each newline-delimited event
to the loop as it arrives (the line splitting of the client's own `kubernetes/watch/watch.py`
`iter_resp_lines`); the loop side turns lines into events. Used only by
`bot.kube.gateway`, which owns the client; this module never imports it.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.core import errors
from bot.core.models import RawObject
from bot.kube import errors as kube_errors
from bot.kube.errors import Call

Put = Callable[[object], None]


@dataclass
class HttpError:
    """The watch request was answered with an error status before any event."""

    status: int
    body: bytes


@dataclass
class WatchStream:
    """The thread side of one watch; `stop()` (from the loop) ends it early."""

    api: Any
    path: str
    query: list[tuple[str, str]]
    timeout: tuple[float, float]
    _stopped: threading.Event = field(default_factory=threading.Event)
    _response: Any = None

    def run(self, put: Put) -> None:
        """Runs in the watch lane: each line as bytes, then None; or an error, then None."""
        try:
            self._stream(put)
        except Exception as e:  # handed to the loop, which names it
            put(e)
        finally:
            if self._response is not None:
                self._response.close()
            put(None)

    def stop(self) -> None:
        """Unblock and end the read under way (urllib3's `HTTPResponse.shutdown`)."""
        self._stopped.set()
        response = self._response
        if response is not None:
            # ValueError, RuntimeError: it has ended on its own meanwhile.
            with contextlib.suppress(ValueError, RuntimeError, OSError):
                response.shutdown()

    def _stream(self, put: Put) -> None:
        request = self.api.param_serialize(
            method="GET",
            resource_path=self.path,
            query_params=self.query,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        answer = self.api.call_api(*request, _request_timeout=self.timeout)
        self._response = answer.response  # from here on, `stop()` can unblock the reads
        if self._stopped.is_set():
            return
        if answer.status >= 400:
            put(HttpError(answer.status, answer.read()))
            return
        buffer = bytearray()
        for segment in self._response.stream(amt=None, decode_content=False):
            if self._stopped.is_set():
                return
            buffer.extend(segment)
            while (end := buffer.find(b"\n")) != -1:
                put(bytes(buffer[:end]))
                del buffer[: end + 1]


def read_event(item: object, call: Call, cluster: str) -> tuple[str, RawObject] | None:
    """One item from the thread as (type, object): ADDED, MODIFIED, DELETED or BOOKMARK (whose
    object carries only the resourceVersion to resume from); None for a keep-alive blank line.

    Raises:
        KubeExpired: 410, the version watched from is gone; KubeForbidden: 403;
        KubeUnavailable: the connection failed or the stream broke; other KubeErrors by status.
    """
    if isinstance(item, HttpError):
        raise kube_errors.from_status(item.status, item.body, call, cluster)
    if isinstance(item, BaseException):
        raise kube_errors.from_connection_error(item, call, cluster) from item
    assert isinstance(item, bytes)
    if not item.strip():
        return None
    try:
        event = json.loads(item)
        kind, obj = event["type"], event["object"]
    except (ValueError, KeyError, TypeError) as e:
        raise errors.KubeUnavailable(
            f"cluster {cluster}: {call.describe()}: the watch sent something that is not an "
            f"event ({item[:80]!r})"
        ) from e
    if kind == "ERROR":
        code = int(obj.get("code") or 500)
        raise kube_errors.from_status(code, json.dumps(obj), call, cluster)
    return str(kind), obj
