"""The one watch transport: watch streams read with aiohttp on the event loop, holding no thread.

A watch stays open for as long as a change is followed (an object) or a copy is kept (a
collection, for minutes); the official client would hold a blocking thread per open watch,
which no bounded thread set can give a fleet. These streams use the same server, token,
certificates and proxy as the client's `Configuration` (kubernetes-client python
`kubernetes/client/configuration.py` `auth_settings`, `ssl_ca_cert`, `cert_file`, `key_file`,
`verify_ssl`, `proxy`) and the same newline-delimited events (`kubernetes/watch/watch.py`
`iter_resp_lines`). A watch is a read: always the bot's own, never impersonated. Used only by
`bot.kube.gateway`, which owns the client's configuration.
"""

from __future__ import annotations

import json
import math
import ssl
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

from bot.core import errors
from bot.kube import errors as kube_errors
from bot.kube.errors import Call
from bot.kube.ports import WatchEvent


@dataclass(frozen=True)
class Endpoint:
    """Where and as whom: the API server's URL, its headers, and its TLS settings."""

    host: str
    headers: dict[str, str]
    tls: ssl.SSLContext | bool
    proxy: str | None = None

    @classmethod
    def of(cls, configuration: Any) -> Endpoint:
        """From the client's `Configuration` (the token read now: a refreshed one is used)."""
        headers: dict[str, str] = {}
        for auth in (configuration.auth_settings() or {}).values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[str(auth["key"])] = str(auth["value"])
        host = str(configuration.host).rstrip("/")
        proxy = str(configuration.proxy) if configuration.proxy else None
        if not host.startswith("https") or not configuration.verify_ssl:
            return cls(host, headers, False, proxy)
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
        return cls(host, headers, context, proxy)


def watch_query(
    resource_version: str,
    seconds: float,
    field_selector: str | None = None,
    label_selector: str | None = None,
) -> list[tuple[str, str]]:
    """A watch request's query: from `resource_version`, bookmarks allowed, for `seconds` (the
    server ends the stream then), narrowed by the selectors given."""
    query = [("watch", "true")]
    query += [("labelSelector", label_selector)] if label_selector else []
    query += [("fieldSelector", field_selector)] if field_selector else []
    query += [("resourceVersion", resource_version), ("allowWatchBookmarks", "true")]
    query.append(("timeoutSeconds", str(max(1, math.ceil(seconds)))))
    return query


async def watch(
    session: aiohttp.ClientSession,
    endpoint: Endpoint,
    path: str,
    query: list[tuple[str, str]],
    *,
    call: Call,
    cluster: str,
    connect_timeout: float,
    read_timeout: float,
    ended: Callable[[str], None] = lambda outcome: None,
) -> AsyncGenerator[WatchEvent, None]:
    """Each event of one watch request until the server ends it (blank keep-alives left out).
    `read_timeout` only catches a dead connection: it runs a little past `timeoutSeconds`.
    `ended` is told the outcome when the request ends (`error`: it raised a KubeError).

    Raises:
        KubeExpired: 410 (as a status or an ERROR event); KubeForbidden: 403;
        KubeUnavailable: no connection, the stream broke or sent something else than events.
    """
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=connect_timeout, sock_read=read_timeout
    )
    headers = {**endpoint.headers, "Accept": "application/json"}
    outcome = "ok"
    try:
        async with session.get(
            endpoint.host + path,
            params=query,
            headers=headers,
            ssl=endpoint.tls,
            proxy=endpoint.proxy,
            timeout=timeout,
        ) as response:
            if response.status >= 400:
                raise kube_errors.from_status(response.status, await response.read(), call, cluster)
            # Split by hand: aiohttp's own line reader refuses lines over its buffer's limit,
            # and one event carries a whole object (a CRD's schema runs to megabytes).
            buffer = bytearray()
            async for chunk in response.content.iter_any():
                buffer.extend(chunk)
                while (end := buffer.find(b"\n")) != -1:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    if line.strip():
                        yield _event(line, call, cluster)
    except (aiohttp.ClientError, TimeoutError, OSError) as e:
        outcome = "error"
        raise kube_errors.from_connection_error(e, call, cluster, endpoint.host) from e
    except errors.KubeError:
        outcome = "error"
        raise
    finally:
        ended(outcome)


def _event(line: bytes, call: Call, cluster: str) -> WatchEvent:
    try:
        event = json.loads(line)
        kind, obj = str(event["type"]), event["object"]
    except (ValueError, KeyError, TypeError) as e:
        raise errors.KubeUnavailable(
            f"cluster {cluster}: {call.describe()}: the watch sent something that is not an "
            f"event ({line[:80]!r})"
        ) from e
    if kind == "ERROR":
        raise kube_errors.from_status(int(obj.get("code") or 500), json.dumps(obj), call, cluster)
    return kind, obj
