"""The Kubernetes gateway: the only module that imports `kubernetes`.

The official client is synchronous, so every call runs on the client's threads (`lanes.py`: one
bounded set shared by every cluster; never the event loop, never the loop's default executor),
with a connect and read timeout on every request because a thread cannot be cancelled. Objects
come back as raw JSON bodies (`RawObject`), the same shape `kubectl get -o yaml` prints, so live
checks and offline `evaluate` share their rules. 429, 5xx and connection errors are retried with
bounded backoff honouring `Retry-After`; everything else becomes a `bot.core.errors.KubeError`
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import urllib3
import yaml

from bot.kube.importing import without_package_init

if "kubernetes" not in sys.modules:  # the parts the gateway uses, not the whole client
    without_package_init("kubernetes")
import kubernetes.client as k8s_client
import kubernetes.config as k8s_config
from kubernetes.config import kube_config
from kubernetes.config.config_exception import ConfigException

from bot.config.settings import ClusterSettings, KubernetesSettings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.core.models import RawObject
from bot.kube import errors as kube_errors
from bot.kube import kinds
from bot.kube.errors import Call
from bot.kube.identity import Impersonation, token_subject
from bot.kube.kinds import ResourceRef
from bot.kube.kubeconfig import KubeconfigIndex
from bot.kube.lanes import ClientThreads
from bot.kube.watching import WatchStream, read_event

if TYPE_CHECKING:  # imported where used (start-up): bot.kube.streams brings aiohttp
    import aiohttp

    from bot.kube import streams

log = logging.getLogger(__name__)

BACKOFFS = (0.2, 0.5, 1.0, 2.0, 4.0)
LIST_PAGE_SIZE = 500
LIST_RESTARTS = 3  # a paged list whose snapshot expired is read again from the start
CONNECT_TIMEOUT = 3.0
THREADS_ALONE = 16  # a gateway built without settings (tests)
# The pods/log subresource as errors name it: RBAC grants it as resource `pods/log`.
POD_LOG = ResourceRef("", "v1", "pods/log", "Pod", namespaced=True)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
Response = tuple[int, Mapping[str, str], bytes]
Sleep = Callable[[float], Awaitable[None]]


class KubeGateway:
    """One cluster's API, as raw objects, with timeouts, retries and actionable errors."""

    def __init__(
        self,
        api_client: Any,
        *,
        cluster: str,
        timeout: float,
        retries: int,
        metrics: Metrics | None = None,
        sleep: Sleep = asyncio.sleep,
        threads: ClientThreads | None = None,
        watch_session: WatchSession | None = None,
    ) -> None:
        self.cluster = cluster
        self.request_count = 0
        # Whom its requests authenticate as (a ServiceAccount token's subject), or "": the
        # impersonator an audit line names beside the person a change was sent as.
        token = getattr(getattr(api_client, "configuration", None), "api_key", None) or {}
        self.authenticated_as = token_subject(str(token.get("BearerToken") or ""))
        self._api = api_client
        self._timeout = (min(CONNECT_TIMEOUT, timeout), timeout)
        self._retries = retries
        self._metrics = metrics
        self._sleep = sleep
        self._threads = threads if threads is not None else ClientThreads(THREADS_ALONE)
        self._watch_session = watch_session or WatchSession()

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        """The object, or None when the API answers 404 for it.

        Raises:
            KubeError: forbidden, unreachable, or any other failure.
        """
        call = Call("get", ref, name, namespace)
        try:
            return await self._request(call, "GET", ref.path(namespace, name))
        except errors.KubeNotFound:
            return None

    async def list_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = LIST_PAGE_SIZE,
    ) -> list[RawObject]:
        """Every matching object, following `continue` pages; an absent resource type is empty.

        Pages are one snapshot; when the API server has compacted it away (410 Expired on a
        continue token) the list starts over from the first page, up to LIST_RESTARTS times.
        client-go's pager (k8s.io/client-go tools/pager/pager.go `FullListIfExpired`) falls back
        to one unpaginated list instead; paging again keeps each answer small.
        `page_size=None` reads the whole list in one request (for lists known to stay small).

        Raises:
            KubeError: forbidden, unreachable, still expiring after the restarts, or any other
                failure.
        """
        query = [("limit", str(page_size))] if page_size else []
        query += [("labelSelector", label_selector)] if label_selector else []
        query += [("fieldSelector", field_selector)] if field_selector else []
        accept = METADATA_ONLY if metadata_only else "application/json"
        items, _ = await self._list_snapshot(ref, namespace, query, accept)
        return items

    async def list_for_watch(
        self, ref: ResourceRef, namespace: str | None = None, *, field_selector: str
    ) -> tuple[list[RawObject], str]:
        """Every object `field_selector` picks and the list's resourceVersion, to watch from
        (`watch_objects`); pages and 410s as `list_objects`.

        Raises:
            KubeError: as `list_objects`.
        """
        query = [("limit", str(LIST_PAGE_SIZE)), ("fieldSelector", field_selector)]
        return await self._list_snapshot(ref, namespace, query, "application/json")

    async def _list_snapshot(
        self, ref: ResourceRef, namespace: str | None, query: list[tuple[str, str]], accept: str
    ) -> tuple[list[RawObject], str]:
        """The paged list, started over on 410 up to LIST_RESTARTS times, and its version."""
        call = Call("list", ref, None, namespace)
        for restart in range(LIST_RESTARTS + 1):
            try:
                return await self._list_pages(call, ref.path(namespace), query, accept)
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
            page = await self._request(call, "GET", path, page_query, accept=accept)
            items.extend(page.get("items") or [])
            metadata = page.get("metadata") or {}
            version = version or str(metadata.get("resourceVersion") or "")
            token = metadata.get("continue") or ""
            if not token:
                return items, version

    async def patch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        body: Any,
        *,
        json_patch: bool = False,
        acting_as: Impersonation | None = None,
    ) -> RawObject:
        """Apply a JSON merge patch (RFC 7386), or a JSON patch (RFC 6902) with `json_patch`;
        sent as `acting_as` (impersonation headers) when given, else as the bot itself.

        Raises:
            KubeNotFound, KubeConflict, KubeInvalid, KubeUnavailable; KubeForbidden (for
            `acting_as`, naming the person and quoting the API server).
        """
        kind = "application/json-patch+json" if json_patch else "application/merge-patch+json"
        call = Call("patch", ref, name, namespace)
        path = ref.path(namespace, name)
        return await self._request(
            call, "PATCH", path, body=body, body_type=kind, acting_as=acting_as
        )

    async def read_pod_log(
        self, namespace: str, pod: str, *, container: str, previous: bool, tail_lines: int
    ) -> str:
        """The last `tail_lines` lines a container printed (its previous instance with
        `previous`), as the API server's `pods/log` answers them (text, not JSON).

        Raises:
            KubeNotFound: the pod is gone; KubeInvalid: that instance has no log (e.g. it never
                restarted, or never started); other KubeErrors as for any read.
        """
        call = Call("get", POD_LOG, pod, namespace)
        query = [("container", container), ("tailLines", str(tail_lines))]
        query += [("previous", "true")] if previous else []
        path = kinds.POD.path(namespace, pod) + "/log"
        data = await self._exchange(call, "GET", path, query, accept="text/plain")
        return data.decode("utf-8", "replace")

    async def watch_object(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None,
        *,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[RawObject | None, None]:
        """Each new state of one object after `resource_version` (None once it is deleted), as
        the API server sends them, for up to `seconds` (then the stream just ends).

        A watch of the collection narrowed by `fieldSelector=metadata.name=NAME`, as `kubectl
        get --watch NAME` does, with bookmarks allowed. It holds a thread of the watch lane
        until it ends; it is never retried (the caller polls instead).

        Raises:
            KubeForbidden: RBAC does not grant `watch`. KubeExpired: 410, the version is too old.
            KubeUnavailable: every watch thread is busy, the API server cannot be reached, or the
                stream broke.
        """
        call = Call("watch", ref, name, namespace)
        selector = f"metadata.name={name}"
        async for kind, obj in self._watch(call, selector, resource_version, seconds):
            if kind != "BOOKMARK":
                yield None if kind == "DELETED" else obj

    async def watch_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        field_selector: str,
        resource_version: str,
        seconds: float,
    ) -> AsyncGenerator[tuple[str, RawObject], None]:
        """Each change of the collection's objects that `field_selector` picks, after
        `resource_version`, as (type, object): ADDED, MODIFIED, DELETED, and BOOKMARK (its
        object carries only the resourceVersion to resume from), for up to `seconds`.

        The list-then-watch of an informer (client-go tools/cache/reflector.go `ListAndWatch`):
        the caller lists first, watches from the list's resourceVersion, resumes from the
        last one seen, and lists again on 410. It holds a thread of the watch lane until it
        ends; it is never retried.

        Raises:
            as `watch_object`.
        """
        call = Call("watch", ref, None, namespace)
        async for change in self._watch(call, field_selector, resource_version, seconds):
            yield change

    async def _watch(
        self, call: Call, field_selector: str, resource_version: str, seconds: float
    ) -> AsyncGenerator[tuple[str, RawObject], None]:
        """One watch request on the watch lane: its events, blank keep-alives left out."""
        lane = self._threads.take_watch_slot()
        if lane is None:
            raise errors.KubeUnavailable(f"cluster {self.cluster}: every watch thread is busy")
        query = [("watch", "true"), ("fieldSelector", field_selector)]
        query += [("resourceVersion", resource_version), ("allowWatchBookmarks", "true")]
        query += [("timeoutSeconds", str(max(1, math.ceil(seconds))))]
        # The server ends the stream after timeoutSeconds; the read timeout only catches a dead
        # connection, so it runs a little past that.
        limits = (self._timeout[0], seconds + self._timeout[1])
        stream = WatchStream(self._api, call.ref.path(call.namespace), query, limits)
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[object] = asyncio.Queue()
        self.request_count += 1

        def put(item: object) -> None:
            loop.call_soon_threadsafe(items.put_nowait, item)

        running = loop.run_in_executor(lane, stream.run, put)
        running.add_done_callback(lambda _: self._threads.release_watch_slot())
        outcome = "ok"
        try:
            while (item := await items.get()) is not None:
                change = read_event(item, call, self.cluster)
                if change is not None:
                    yield change
        except errors.KubeError:
            outcome = "error"
            raise
        finally:
            stream.stop()
            self._count("watch", outcome)

    async def list_versioned(
        self, ref: ResourceRef, namespace: str | None = None, *, metadata_only: bool = False
    ) -> tuple[list[RawObject], str]:
        """The whole collection in one request and the resourceVersion to watch it from; an
        absent resource type is empty (version "").

        Raises:
            KubeError: forbidden, unreachable, or any other failure.
        """
        call = Call("list", ref, None, namespace)
        try:
            accept = METADATA_ONLY if metadata_only else "application/json"
            page = await self._request(call, "GET", ref.path(namespace), accept=accept)
        except errors.KubeNotFound:
            return [], ""
        version = str((page.get("metadata") or {}).get("resourceVersion") or "")
        return list(page.get("items") or []), version

    async def watch_collection(
        self, ref: ResourceRef, namespace: str | None, *, resource_version: str, seconds: float
    ) -> AsyncGenerator[streams.Event, None]:
        """Each event of the collection after `resource_version`, bookmarks included, for up to
        `seconds` (then the stream just ends). Read on the event loop: it holds no thread.

        Raises:
            KubeForbidden: RBAC does not grant `watch`. KubeExpired: 410, the version is too old.
            KubeUnavailable: the API server cannot be reached, or the stream broke.
        """
        from bot.kube import streams  # here: aiohttp costs start-up time, and `check` never watches

        query = [("watch", "true"), ("resourceVersion", resource_version)]
        query += [("allowWatchBookmarks", "true"), ("timeoutSeconds", str(math.ceil(seconds)))]
        self.request_count += 1
        self._count("watch", "ok")
        changes = streams.watch(
            self._watch_session.get(),
            streams.Endpoint.of(self._api.configuration),
            ref.path(namespace),
            query,
            call=Call("watch", ref, None, namespace),
            cluster=self.cluster,
            read_timeout=seconds + self._timeout[1],
        )
        async with contextlib.aclosing(changes):
            async for event in changes:
                yield event

    def close_idle_connections(self) -> None:
        """Close this cluster's keep-alive connections not in use (urllib3 `PoolManager.clear`:
        one in use is closed when it is given back; the next request opens a new one). A
        cluster whose reads all come from watched copies asks nothing for an hour: the
        connections its first lists opened would sit idle, and a fleet's thousands of idle
        sockets cost tens of megabytes."""
        self._api.rest_client.pool_manager.clear()

    async def close_streams(self) -> None:
        """Close the collection watches' connections (on the event loop, before it ends)."""
        await self._watch_session.close()

    async def server_version(self) -> str:
        """The API server's `gitVersion`; a cheap reachability probe for `/readyz`."""
        call = Call("get", ResourceRef("", "", "version", "Version", False))
        try:
            answer = await self._request(call, "GET", "/version")
        except errors.KubeNotFound:
            return "unknown"  # it answered: reachable, though it does not serve /version
        return str(answer.get("gitVersion", "unknown"))

    def close(self) -> None:
        """Stop the client's threads (shared ones too: the service is stopping) and close this
        cluster's connections."""
        self._threads.shutdown()
        self._api.close()

    async def _request(
        self,
        call: Call,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """`_exchange` (body, body_type, accept as there), its answer parsed as JSON."""
        return self._parse(call, await self._exchange(call, method, path, query, **options))

    async def _exchange(
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
        """One request with its retries: the answer's body, or the final KubeError."""
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
                    self._count(call.verb, "error")
                    raise again.error from again.__cause__
                self._count(call.verb, "retried")
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
            self._count(call.verb, "ok")
            return data
        error = kube_errors.from_status(status, data, call, self.cluster, acting_as)
        if not kube_errors.is_retryable(status):
            self._count(call.verb, "error")
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
            method, url, header_params, body, post_params, _request_timeout=self._timeout
        )
        data = response.read()
        return response.status, response.headers, data

    def _count(self, verb: str, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.kube_requests.labels(self.cluster, verb, outcome).inc()

    async def create_object(
        self, ref: ResourceRef, namespace: str | None, body: RawObject
    ) -> RawObject:
        """Create an object (POST); the bot's own Lease and state ConfigMap are made this way.

        Raises:
            KubeConflict (it already exists), KubeForbidden, KubeInvalid, KubeUnavailable.
        """
        name = str((body.get("metadata") or {}).get("name") or "") or None
        call = Call("create", ref, name, namespace)
        return await self._request(
            call, "POST", ref.path(namespace), body=dict(body), body_type="application/json"
        )


def _final(error: errors.KubeError, note: str) -> errors.KubeWriteUnknown:
    return errors.KubeWriteUnknown(f"{error}; {note}")


class _TryAgain(Exception):
    """A temporary failure: the error to raise if it was the last try, and how long to wait."""

    def __init__(self, error: errors.KubeError, delay: float) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay = delay


class WatchSession:
    """The aiohttp session the collection watches are read with, made on first use (on the
    running loop), shared by every gateway `connect_all` makes: a session per cluster cost a
    fleet a connector, a cookie jar and a DNS cache each. No limit on its connections: every
    followed collection of every cluster holds one open."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def connect(
    cluster: ClusterSettings,
    settings: KubernetesSettings,
    metrics: Metrics | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
    threads: ClientThreads | None = None,
    kubeconfigs: dict[str, Any] | None = None,
    watch_session: WatchSession | None = None,
) -> KubeGateway:
    """A gateway for one configured cluster: kubeconfig path and context, or in-cluster.

    `threads` and `kubeconfigs` (files already read, by path) are shared by `connect_all`.

    Raises:
        ConfigError: the kubeconfig or the in-cluster service account cannot be loaded.
    """
    configuration = k8s_client.Configuration()
    try:
        if cluster.in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        else:
            _load_kubeconfig(cluster, configuration, {} if kubeconfigs is None else kubeconfigs)
    except (ConfigException, OSError, TypeError, ValueError, yaml.YAMLError) as e:
        where = "in-cluster config" if cluster.in_cluster else f"kubeconfig {cluster.kubeconfig}"
        raise errors.ConfigError([f"clusters[{cluster.name}]: cannot load {where}: {e}"]) from e
    # Our own loop retries with backoff and Retry-After; urllib3's retries would hide the attempts.
    configuration.retries = 0
    # One connection per client thread: with fewer (the client's default is 5 per CPU), requests
    # made at once open connections the pool then drops, each with urllib3's "Connection pool is
    # full" warning (kubernetes-client python kubernetes/client/rest.py `RESTClientObject`).
    configuration.connection_pool_maxsize = settings.threads
    return KubeGateway(
        k8s_client.ApiClient(configuration),
        cluster=cluster.name,
        timeout=settings.request_timeout.total_seconds(),
        retries=settings.retries,
        metrics=metrics,
        sleep=sleep,
        threads=threads if threads is not None else ClientThreads(settings.threads),
        watch_session=watch_session,
    )


def connect_all(
    clusters: Iterable[ClusterSettings],
    settings: KubernetesSettings,
    metrics: Metrics | None = None,
) -> dict[str, KubeGateway]:
    """A gateway per cluster, all on one set of `settings.threads` threads; each kubeconfig
    file is read once, however many clusters name a context in it.

    Raises:
        ConfigError: as `connect`, for the first cluster that cannot be loaded.
    """
    threads, session = ClientThreads(settings.threads), WatchSession()
    kubeconfigs: dict[str, Any] = {}
    return {
        c.name: connect(
            c, settings, metrics, threads=threads, kubeconfigs=kubeconfigs, watch_session=session
        )
        for c in clusters
    }


def _load_kubeconfig(
    cluster: ClusterSettings, configuration: Any, kubeconfigs: dict[str, Any]
) -> None:
    """`load_kube_config(path, context)`, reading each path (or KUBECONFIG list) only once.

    The files are merged as the client merges them (`bot.kube.kubeconfig`), then the client's
    own `KubeConfigLoader` loads the context from a config holding only that context, its
    cluster and its user, each a `ConfigNode` naming the file it came from (relative certificate
    paths), as `KubeConfigMerger` builds them. The client's merge and its lookups by name scan
    every context for each one loaded: quadratic in the fleet's size.
    """
    path = cluster.kubeconfig or kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    if path not in kubeconfigs:
        kubeconfigs[path] = KubeconfigIndex.read(path)
    index: KubeconfigIndex | None = kubeconfigs[path]
    if index is None:
        raise ConfigException("Invalid kube-config file. No configuration found.")
    sections = {
        section: [
            kube_config.ConfigNode(f"{e.path}/{e.value}", e.value, e.path)  # type: ignore[no-untyped-call]
            for e in entries
        ]
        for section, entries in index.narrowed(cluster.context).items()
    }
    merged = kube_config.ConfigNode(index.path, {**index.top, **sections}, index.path)  # type: ignore[no-untyped-call]
    loader = kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
        config_dict=merged, config_base_path=None, active_context=cluster.context
    )
    loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
