"""Injected failures and the request log of the simulated API server.

`Faults.add(...)` makes matching requests answer an error Status (429 with Retry-After, a real
Forbidden message for 403, ...) or wait first; `refuse_all` drops every connection unanswered.
`applied=True` carries the request out first and
answers the error after (a 5xx from a proxy or a timeout after etcd took the write).
`RecordedRequest` is one line of the log tests count requests with. No HTTP here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from testbed.sim import status as st
from testbed.sim.impersonation import Acting
from testbed.sim.routing import Route

SERVICE_ACCOUNT = "system:serviceaccount:kai-chatops:kai-chatops"
_MESSAGES = {
    401: "Unauthorized",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    409: "Operation cannot be fulfilled: the object has been modified; please apply your "
    "changes to the latest version and try again",
    503: "the server is currently unable to handle the request",
    504: (
        "the server was unable to return a response in the time allotted, "
        "but may still be processing the request"
    ),
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the simulated server saw it, with the status it answered.

    Logged when the answer is complete (a watch: when its stream ends); status 0 means the
    connection was dropped (`refuse_all`). `body` is the parsed JSON body, if any.
    """

    method: str
    path: str
    query: dict[str, str]
    verb: str
    group: str
    version: str
    resource: str
    namespace: str | None
    name: str | None
    subresource: str | None
    status: int
    content_type: str = ""
    body: Any = None
    acting: Acting | None = None  # the identity it impersonated (`Impersonate-*` headers)


@dataclass
class Fault:
    """One injected failure; `times=None` keeps it forever, `status=None` only delays."""

    status: int | None
    method: str | None = None
    path_contains: str | None = None
    verb: str | None = None
    resource: str | None = None
    times: int | None = 1
    retry_after: int | None = None
    delay: float = 0.0
    message: str | None = None
    hits: int = 0
    applied: bool = False  # the request is carried out, then answered with the error
    gate: asyncio.Event | None = None  # held until the test sets it (after `delay`)

    def matches(self, method: str, path: str, route: Route) -> bool:
        """Whether this fault applies to a request (every given criterion must match)."""
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method is not None and self.method.upper() != method:
            return False
        if self.path_contains is not None and self.path_contains not in path:
            return False
        if self.verb is not None and self.verb != route.verb:
            return False
        return self.resource is None or self.resource in (route.resource, _qualified(route))

    def error(self, path: str, route: Route) -> st.ApiError | None:
        """The error this fault answers with, or None for a delay-only fault."""
        if self.status is None:
            return None
        if self.status == 403:
            return forbidden(path, route, self.message)
        details = {"retryAfterSeconds": self.retry_after} if self.retry_after else None
        message = self.message or _MESSAGES.get(self.status, f"injected fault {self.status}")
        return st.ApiError(self.status, message, details=details)


@dataclass
class Faults:
    """The injected failures a running simulator applies, first added first."""

    refuse_all: bool = False
    active: list[Fault] = field(default_factory=list)

    def add(
        self,
        status: int | None = 503,
        *,
        method: str | None = None,
        path_contains: str | None = None,
        verb: str | None = None,
        resource: str | None = None,
        times: int | None = 1,
        retry_after: int | None = None,
        delay: float = 0.0,
        message: str | None = None,
        applied: bool = False,
        gate: asyncio.Event | None = None,
    ) -> Fault:
        """Make matching requests fail (or wait `delay` seconds first); returns the fault.

        `resource` matches a plural (`configs`) or a qualified name (`configs.kai.scheduler`);
        `verb` is get, list, watch, create, update, patch, delete or discovery. `applied`:
        the request is carried out and its success answered with the error instead. `gate`: the
        request waits until the test sets it (then fails, or is served when `status` is None).
        """
        fault = Fault(
            status,
            method,
            path_contains,
            verb,
            resource,
            times,
            retry_after,
            delay,
            message,
            applied=applied,
            gate=gate,
        )
        self.active.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every fault and accept connections again."""
        self.active.clear()
        self.refuse_all = False

    def take(self, method: str, path: str, route: Route) -> Fault | None:
        """The first fault matching a request, counted as used once."""
        for fault in self.active:
            if fault.matches(method, path, route):
                fault.hits += 1
                return fault
        return None


def forbidden(path: str, route: Route, message: str | None = None) -> st.ApiError:
    """403 worded like RBAC: `configs.kai.scheduler "kai-config" is forbidden: User ...`."""
    user = f'User "{SERVICE_ACCOUNT}"'
    if not route.is_resource:
        text = message or f'forbidden: {user} cannot get path "{path}"'
        return st.ApiError(403, text)
    resource = f"{route.resource}/{route.subresource}" if route.subresource else route.resource
    subject = _qualified(route) + (f' "{route.name}"' if route.name else "")
    scope = f'in the namespace "{route.namespace}"' if route.namespace else "at the cluster scope"
    text = message or (
        f"{subject} is forbidden: {user} cannot {route.verb} resource "
        f'"{resource}" in API group "{route.group}" {scope}'
    )
    details = {"name": route.name or "", "group": route.group, "kind": route.resource}
    return st.ApiError(403, text, details=details)


def _qualified(route: Route) -> str:
    return st.qualified(route.resource, route.group)
