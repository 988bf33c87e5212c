"""The simulated API server's HTTP side: aiohttp routes, Status errors, request log and faults.

Translates requests into `Store` calls (CRUD, status subresource, patches by content type,
`dryRun`, selectors, pagination, metadata-only lists) and answers as kube-apiserver does, so
the official client and kubectl work unchanged. Watch streams live in `watching`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from testbed.sim import resources
from testbed.sim import status as st
from testbed.sim.faults import Faults, RecordedRequest
from testbed.sim.impersonation import Impersonation, read_headers
from testbed.sim.listing import read_list_options
from testbed.sim.objects import PatchType, WriteMode
from testbed.sim.podlogs import PodLogs, read_log
from testbed.sim.routing import Route, parse_route
from testbed.sim.selectors import convert_field_labels, parse_selector
from testbed.sim.shapes import negotiate, to_partial
from testbed.sim.store import Store
from testbed.sim.watching import WatchHub, read_watch_options

_PATCH_TYPES: dict[str, PatchType] = {
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/json-patch+json": "json",
}
# What a custom resource accepts: no strategic merge patch, which needs Go types (k8s.io/
# apiextensions-apiserver pkg/apiserver/customresource_handler.go `supportedTypes`; answered by
# k8s.io/apiserver pkg/endpoints/handlers/patch.go `PatchResource`).
_CUSTOM_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
)
_ROUTE = web.RequestKey("route", Route)
_BODY: web.RequestKey[Any] = web.RequestKey("body")
_NO_APPLY = (
    "server-side apply (application/apply-patch+yaml) is not supported by the simulator; "
    "send a merge patch (application/merge-patch+json) or a JSON patch instead"
)


class ApiServer:
    """An HTTP front for a `Store`, recording requests and applying faults."""

    def __init__(
        self,
        store: Store,
        requests: list[RecordedRequest],
        faults: Faults,
        logs: PodLogs | None = None,
        bookmark_every: float = 1.0,
        impersonation: Impersonation | None = None,
        gone_every: float = 0.5,
    ) -> None:
        self.store = store
        self.requests = requests
        self.faults = faults
        self.impersonation = impersonation or Impersonation()
        self.logs = logs or PodLogs()
        self.address = ""
        self._hub = WatchHub(store, bookmark_every=bookmark_every, gone_every=gone_every)
        self._runner: web.AppRunner | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port (0 = any free port); returns the port."""
        app = web.Application(middlewares=[self._middleware], client_max_size=16 * 1024**2)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=True, backlog=_backlog())
        await site.start()
        port = self._runner.addresses[0][1]
        self.address = f"{host}:{port}"
        return int(port)

    async def listen_also(self, host: str) -> int:
        """Listen on one more port of `host` too (the same API, the same store); returns it."""
        assert self._runner is not None, "start() first"
        site = web.TCPSite(self._runner, host, 0, reuse_address=True, backlog=_backlog())
        await site.start()
        return int(self._runner.addresses[-1][1])

    @property
    def open_watches(self) -> int:
        """Watch streams still open; a client that went away is noticed within half a second."""
        return self._hub.open_streams

    def end_watches(self) -> None:
        """End every open watch stream now, as an API server restart or a proxy timeout does."""
        self._hub.close_all()

    async def stop(self) -> None:
        """Close open watches and connections, stop listening."""
        self._hub.close_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        route = parse_route(request.method, request.path, request.query)
        request[_ROUTE] = route
        body = await _read_body(request)
        request[_BODY] = body
        if self.faults.refuse_all:
            _drop_connection(request)
            self.requests.append(_record(request, route, body, 0))
            return web.Response()  # never sent: the connection is already gone
        code = 0
        try:
            response = await self._answer(request, route, handler)
            code = response.status
            return response
        finally:
            self.requests.append(_record(request, route, body, code))

    async def _answer(
        self, request: web.Request, route: Route, handler: Handler
    ) -> web.StreamResponse:
        acting = read_headers(list(request.headers.items()))
        refusal = None if acting is None else self.impersonation.refusal(acting, route)
        if refusal is not None:
            return _error(refusal)
        fault = self.faults.take(request.method, request.path, route)
        try:
            if fault is not None:
                await asyncio.sleep(fault.delay)
                if fault.gate is not None:
                    await fault.gate.wait()
                error = fault.error(request.path, route)
                if error is not None and fault.applied:
                    done = await handler(request)
                    return _error(error, fault.retry_after) if done.status < 400 else done
                if error is not None:
                    return _error(error, fault.retry_after)
            return await handler(request)
        except st.ApiError as exc:
            return _error(exc)
        except Exception as exc:  # a simulator bug: still answer as an API server would
            return _error(st.ApiError(500, f"Internal error occurred: {exc!r}"))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        route = request[_ROUTE]
        if not route.is_resource:
            return self._discovery(request.path)
        rtype = self._resource_type(route)
        if route.verb in ("list", "watch"):
            return await self._collection(request, route, rtype)
        if route.subresource == resources.POD_LOG:
            pod = self.store.get(rtype, route.namespace, route.name or "")
            text = read_log(pod, request.query, self.logs)
            return web.Response(text=text, content_type="text/plain")
        if route.verb == "get":
            return _negotiated(request, self.store.get(rtype, route.namespace, route.name or ""))
        return self._write(request, route, rtype)

    async def _collection(
        self, request: web.Request, route: Route, rtype: resources.ResourceType
    ) -> web.StreamResponse:
        query = request.query
        fields = [query.get("fieldSelector", "")]
        if route.name:  # a watch on one object's URL
            fields.append(f"metadata.name={route.name}")
        selector = parse_selector(query.get("labelSelector", ""), ",".join(filter(None, fields)))
        limit = int(_number(query.get("limit")) or 0)
        list_options = read_list_options(query, limit) if route.verb == "list" else None
        selector = convert_field_labels(
            selector,
            rtype.group,
            rtype.kind,
            custom=rtype.custom,
            selectable=rtype.selectable_fields,
        )
        if route.verb == "watch":
            options = read_watch_options(query, _number(query.get("timeoutSeconds")))
            return await self._hub.stream(request, rtype, route.namespace, selector, options)
        assert list_options is not None
        listed = self.store.list_objects(
            rtype,
            route.namespace,
            selector=selector,
            limit=list_options.limit,
            continue_token=list_options.continue_token,
            resource_version=list_options.resource_version,
            match=list_options.match,
        )
        return _negotiated(request, listed)

    def _write(
        self, request: web.Request, route: Route, rtype: resources.ResourceType
    ) -> web.StreamResponse:
        dry_run = _dry_run(request.query)
        mode: WriteMode = "status" if route.subresource == "status" else "main"
        body, namespace, name = request[_BODY], route.namespace, route.name or ""
        if route.verb in ("create", "update"):
            _check_custom_body(rtype, body)
        if route.verb == "create":
            return _json(self.store.create(rtype, namespace, body, dry_run=dry_run), 201)
        if route.verb == "update":
            replaced = self.store.replace(rtype, namespace, name, body, mode=mode, dry_run=dry_run)
            return _json(replaced)
        if route.verb == "patch":
            if rtype.custom and request.content_type not in _CUSTOM_PATCH_TYPES:
                raise _unsupported_media_type(_CUSTOM_PATCH_TYPES)
            kind = _patch_type(request.content_type)
            patched = self.store.patch(
                rtype, namespace, name, kind, body, mode=mode, dry_run=dry_run
            )
            return _json(patched)
        if route.verb == "delete":
            return _json(self.store.delete(rtype, namespace, name, dry_run=dry_run))
        raise _not_allowed()

    def _resource_type(self, route: Route) -> resources.ResourceType:
        rtype = self.store.find_type(route.group, route.version, route.resource)
        if rtype is None:
            raise st.resource_not_found()
        lacks_namespace = rtype.namespaced and route.namespace is None
        if lacks_namespace and (route.name or route.verb == "create"):
            raise st.resource_not_found()
        if not rtype.namespaced and route.namespace is not None:
            raise st.resource_not_found()
        if route.subresource is not None and not (
            (route.subresource == "status" and rtype.has_status) or _is_log(route, rtype)
        ):
            raise st.resource_not_found()
        if route.subresource == resources.POD_LOG and route.verb != "get":
            raise _not_allowed()
        if route.subresource is not None and route.verb not in ("get", "update", "patch"):
            raise st.ApiError(
                405, "the server does not allow this method on the requested resource"
            )
        return rtype

    def _discovery(self, path: str) -> web.StreamResponse:
        parts = [part for part in path.split("/") if part]
        types = self.store.types()
        if parts == ["version"]:
            return _json(resources.SERVER_VERSION)
        if parts == ["api"]:
            return _json(resources.api_versions(self.address))
        if parts == ["api", "v1"]:
            return _json(resources.api_resource_list("", "v1", types))
        if parts == ["apis"]:
            return _json(resources.api_group_list(types))
        groups = resources.group_versions(types)
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in groups:
            return _json(resources.api_group(parts[1], groups[parts[1]]))
        if len(parts) == 3 and parts[0] == "apis" and parts[2] in groups.get(parts[1], ()):
            return _json(resources.api_resource_list(parts[1], parts[2], types))
        if parts and parts[0] in ("healthz", "readyz", "livez"):
            return web.Response(text="ok")
        return web.Response(status=404, text="404 page not found\n")


def _negotiated(request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
    if negotiate(request.headers.get("Accept", "")) == "partial":
        return _json(to_partial(body))
    return _json(body)


def _check_custom_body(rtype: resources.ResourceType, body: Any) -> None:
    """A custom resource's body names its kind and apiVersion: the unstructured decoder of
    k8s.io/apiextensions-apiserver (`unstructuredCreator`) refuses it otherwise, where a
    built-in type's decoder takes them from the URL.

    Raises:
        ApiError: 400 without `kind` or without `apiVersion`.
    """
    if not rtype.custom or not isinstance(body, dict):
        return
    if not body.get("kind"):
        quoted = json.dumps(body, separators=(",", ":"))
        message = (
            f"the object provided is unrecognized (must be of type {rtype.kind}): "
            f"Object 'Kind' is missing in '{quoted}'"
        )
        raise st.ApiError(400, message)
    if not body.get("apiVersion"):
        message = (
            "the API version in the data () does not match the expected API version "
            f"({rtype.api_version})"
        )
        raise st.ApiError(400, message)


def _is_log(route: Route, rtype: resources.ResourceType) -> bool:
    return route.subresource == resources.POD_LOG and resources.is_pod(rtype)


def _not_allowed() -> st.ApiError:
    return st.ApiError(405, "the server does not allow this method on the requested resource")


def _number(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text)
    except ValueError as exc:
        raise st.ApiError(400, f"not a number: {text!r}") from exc


def _json(body: Any, code: int = 200) -> web.Response:
    return web.Response(
        status=code, body=json.dumps(body).encode(), content_type="application/json"
    )


def _error(error: st.ApiError, retry_after: int | None = None) -> web.Response:
    response = _json(error.status_body(), error.code)
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _patch_type(content_type: str) -> PatchType:
    if content_type == "application/apply-patch+yaml":
        raise st.ApiError(415, _NO_APPLY)
    if content_type not in _PATCH_TYPES:
        # A built-in type's route refuses the content type before its patch handler runs
        # (go-restful's `Consumes` filter), in its own words.
        raise st.ApiError(415, "415: Unsupported Media Type")
    return _PATCH_TYPES[content_type]


def _unsupported_media_type(accepted: tuple[str, ...]) -> st.ApiError:
    """415, worded as k8s.io/apiserver pkg/endpoints/handlers/negotiation/errors.go words it."""
    listed = ", ".join(accepted)
    message = (
        f"the body of the request was in an unknown format - accepted media types include: {listed}"
    )
    return st.ApiError(415, message)


def _dry_run(query: Any) -> bool:
    values = query.getall("dryRun", [])
    if any(value != "All" for value in values):
        raise st.ApiError(400, f'unsupported dry run value: {values}; only "All" is supported')
    return bool(values)


async def _read_body(request: web.Request) -> Any:
    if not request.can_read_body:
        return None
    raw = await request.read()
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def _drop_connection(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _record(request: web.Request, route: Route, body: Any, code: int) -> RecordedRequest:
    return RecordedRequest(
        method=request.method,
        path=request.path,
        query=dict(request.query),
        verb=route.verb,
        group=route.group,
        version=route.version,
        resource=route.resource,
        namespace=route.namespace,
        name=route.name,
        subresource=route.subresource,
        status=code,
        content_type=request.content_type if body is not None else "",
        body=body,
        acting=read_headers(list(request.headers.items())),
    )


def _backlog() -> int:
    """The listen queue a Go server gets: the kernel's somaxconn (Go's net/sock_linux.go
    `maxListenerBacklog`), not aiohttp's 128. A fleet's thousands of watches opened at once
    against one simulated server would otherwise wait out SYN retries no real API server
    makes them wait."""
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return 128
