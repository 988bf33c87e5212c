"""One cluster's request/response calls through the official client's REST layer, retried.

Every call runs on the client's threads (`bot.kube.threads`: one bounded set shared by every
cluster; never the event loop, never the loop's default executor), with a connect and read
timeout because a thread cannot be cancelled. 429, 5xx and connection errors are retried with
bounded backoff honouring `Retry-After`; everything else becomes a `bot.core.errors.KubeError`
at once. The client object is handed in by `bot.kube.gateway`, the only module that imports it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import urllib3

from bot.core import errors
from bot.core.metrics import Metrics
from bot.core.models import RawObject, Sleep
from bot.kube import errors as kube_errors
from bot.kube.errors import Call
from bot.kube.identity import Impersonation
from bot.kube.threads import ClientThreads

log = logging.getLogger(__name__)

BACKOFFS = (0.2, 0.5, 1.0, 2.0, 4.0)
LIST_RESTARTS = 3  # a paged list whose snapshot expired is read again from the start
CONNECT_TIMEOUT = 3.0
Response = tuple[int, Mapping[str, str], bytes]


class RestCalls:
    """The requests of one cluster's gateway, each with its retries, counted."""

    def __init__(
        self,
        api_client: Any,
        *,
        cluster: str,
        timeout: float,
        retries: int,
        threads: ClientThreads,
        metrics: Metrics | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.cluster = cluster
        self.request_count = 0  # every request sent, watches too
        self.timeout = (min(CONNECT_TIMEOUT, timeout), timeout)  # connect, read
        self._api = api_client
        self._retries = retries
        self._threads = threads
        self._metrics = metrics
        self._sleep = sleep

    async def json(
        self,
        call: Call,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """`exchange` (body, body_type, accept, acting_as as there), its answer parsed as JSON."""
        return self._parse(call, await self.exchange(call, method, path, query, **options))

    async def list_snapshot(
        self, call: Call, path: str, query: list[tuple[str, str]], accept: str
    ) -> tuple[list[RawObject], str]:
        """A paged list and the resourceVersion of its snapshot; an absent resource type is
        empty (version ""). Pages are one snapshot; when the API server has compacted it away
        (410 Expired on a continue token) the list starts over from the first page, up to
        LIST_RESTARTS times. client-go's pager (k8s.io/client-go tools/pager/pager.go
        `FullListIfExpired`) falls back to one unpaginated list instead; paging again keeps
        each answer small.

        Raises:
            KubeError: forbidden, unreachable, still expiring after the restarts, or any other
                failure.
        """
        for restart in range(LIST_RESTARTS + 1):
            try:
                return await self._list_pages(call, path, query, accept)
            except errors.KubeNotFound:
                return [], ""
            except errors.KubeExpired as e:
                if restart == LIST_RESTARTS:
                    raise
                log.info("cluster %s: %s; listing again from the start", self.cluster, e)
        raise AssertionError("unreachable")

    async def _list_pages(
        self, call: Call, path: str, query: list[tuple[str, str]], accept: str
    ) -> tuple[list[RawObject], str]:
        """One paged list, page after page of the same snapshot, and that snapshot's version."""
        items: list[RawObject] = []
        token, version = "", ""
        while True:
            page_query = query + ([("continue", token)] if token else [])
            page = await self.json(call, "GET", path, page_query, accept=accept)
            items.extend(page.get("items") or [])
            metadata = page.get("metadata") or {}
            version = version or str(metadata.get("resourceVersion") or "")
            token = metadata.get("continue") or ""
            if not token:
                return items, version

    async def exchange(
        self,
        call: Call,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        *,
        body: Any = None,
        body_type: str | None = None,
        accept: str = "application/json",
        acting_as: Impersonation | None = None,
    ) -> bytes:
        """One request with its retries: the answer's body, or the final KubeError.

        Raises:
            NotAllowed: `acting_as` has a value no HTTP header carries (nothing is sent; the
                change pipeline refuses such a person before, this is the last guard).
        """
        unsendable = acting_as.unsendable() if acting_as else None
        if unsendable is not None:
            name, value = unsendable
            raise errors.NotAllowed(
                f"cluster {self.cluster}: {call.describe()}: {name} {value!r} cannot be sent in "
                "an HTTP header as Kubernetes reads it; nothing was sent"
            )
        headers = {"Accept": accept} | ({"Content-Type": body_type} if body_type else {})
        lines = acting_as.headers() if acting_as else []
        send = functools.partial(self._send, method, path, query or [], headers, body, lines)
        as_whom = acting_as.describe() if acting_as else ""
        attempts = self._retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._attempt(call, send, attempt, as_whom)
            except _TryAgain as again:
                if attempt == attempts:
                    self.count(call.verb, "error")
                    raise again.error from again.__cause__
                self.count(call.verb, "retried")
                log.warning(
                    "cluster %s: %s: attempt %d/%d failed (%s); retrying in %.1fs",
                    *(self.cluster, call.describe(), attempt, attempts, again.error, again.delay),
                )
                await self._sleep(again.delay)
        raise AssertionError("unreachable")

    async def _attempt(
        self, call: Call, send: Callable[[], Response], attempt: int, acting_as: str = ""
    ) -> bytes:
        """One try: the body, a final KubeError, or _TryAgain with the wait to the next.

        Reads are retried on any temporary failure. A write is retried only when it surely was
        not applied (429, or no connection made): after a timeout or a 5xx it may have been, and
        a blind retry would turn a done change into a 409 and a wrong "nothing changed".
        """
        self.request_count += 1
        backoff = BACKOFFS[min(attempt, len(BACKOFFS)) - 1]
        is_read = call.verb in ("get", "list")
        try:
            status, headers, data = await asyncio.get_running_loop().run_in_executor(
                self._threads.lane(), send
            )
        except (urllib3.exceptions.HTTPError, OSError) as e:
            server = str(getattr(self._api.configuration, "host", ""))
            error = kube_errors.from_connection_error(e, call, self.cluster, server)
            if is_read or kube_errors.surely_not_sent(e):
                raise _TryAgain(error, backoff) from e
            raise _final(error, "it may or may not have been applied: check before retrying") from e
        if status < 400:
            self.count(call.verb, "ok")
            return data
        error = kube_errors.from_status(status, data, call, self.cluster, acting_as)
        if not kube_errors.is_retryable(status):
            self.count(call.verb, "error")
            raise error
        if not is_read and status != 429:
            raise _final(error, "it may or may not have been applied: check before retrying")
        retry_after = kube_errors.parse_retry_after(headers.get("Retry-After"))
        raise _TryAgain(errors.KubeUnavailable(str(error)), max(backoff, retry_after or 0.0))

    def _parse(self, call: Call, data: bytes) -> dict[str, Any]:
        try:
            parsed: dict[str, Any] = json.loads(data or b"{}")
        except ValueError as e:  # a proxy's HTML page, say: the API server did not answer
            raise errors.KubeUnavailable(
                f"cluster {self.cluster}: {call.describe()}: the answer was not JSON "
                f"({data[:80]!r})"
            ) from e
        return parsed

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        extra_lines: list[tuple[str, str]],
    ) -> Response:
        """Runs in the pool: one HTTP exchange through the official client, no retries.

        `extra_lines` are header lines whose name may repeat (`Impersonate-Group`): the
        client's `header_params` is a dict, one value per name, so they are added to the
        urllib3 header dict it hands to urllib3 (kubernetes/client/rest.py `request` passes
        `headers` through), which sends each value as its own line.
        """
        method, url, header_params, body, post_params = self._api.param_serialize(
            method=method,
            resource_path=path,
            query_params=query,
            header_params=dict(headers),
            body=body,
            auth_settings=["BearerToken"],
        )
        if extra_lines:
            header_params = urllib3.HTTPHeaderDict(header_params)
            for name, value in extra_lines:
                header_params.add(name, value)
        response = self._api.call_api(
            method, url, header_params, body, post_params, _request_timeout=self.timeout
        )
        data = response.read()
        return response.status, response.headers, data

    def count(self, verb: str, outcome: str) -> None:
        """One request's outcome in `kai_chatops_kube_requests` (ok, retried, error)."""
        if self._metrics is not None:
            self._metrics.kube_requests.labels(self.cluster, verb, outcome).inc()


def _final(error: errors.KubeError, note: str) -> errors.KubeWriteUnknown:
    return errors.KubeWriteUnknown(f"{error}; {note}")


class _TryAgain(Exception):
    """A temporary failure: the error to raise if it was the last try, and how long to wait."""

    def __init__(self, error: errors.KubeError, delay: float) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay = delay
