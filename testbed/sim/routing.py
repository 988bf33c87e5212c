"""What an HTTP request to the simulated API server addresses: group, version, resource, verb.

Pure: parses a request path and query the way kube-apiserver does (`/api/v1/...`,
`/apis/{group}/{version}/...`, `namespaces/{ns}/...`, `.../{name}/status`) and names the verb
(get, list, watch, create, update, patch, delete, deletecollection; `discovery` for the rest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Route:
    """The resource coordinates of one request; `resource` is "" for non-resource paths."""

    verb: str
    group: str = ""
    version: str = ""
    resource: str = ""
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None

    @property
    def is_resource(self) -> bool:
        return bool(self.resource)


def is_true(value: str | None) -> bool:
    """A boolean query parameter (`watch=1`, `watch=true`)."""
    return (value or "").lower() in ("1", "true")


def parse_route(method: str, path: str, query: Mapping[str, str]) -> Route:
    """The route of a request; unknown shapes come back as non-resource `discovery` routes."""
    parts = [part for part in path.split("/") if part]
    if parts[:2] == ["api", "v1"] and len(parts) > 2:
        return _resource_route(method, "", "v1", parts[2:], query)
    if parts[:1] == ["apis"] and len(parts) > 3:
        return _resource_route(method, parts[1], parts[2], parts[3:], query)
    return Route(verb="discovery")


def _resource_route(
    method: str, group: str, version: str, parts: list[str], query: Mapping[str, str]
) -> Route:
    namespace = None
    is_namespace_itself = len(parts) == 3 and parts[2] in _NAMESPACE_SUBRESOURCES
    if parts[0] == "namespaces" and len(parts) >= 3 and not is_namespace_itself:
        namespace, parts = parts[1], parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) > 1 else None
    subresource = "/".join(parts[2:]) or None
    return Route(
        verb=_verb(method, name, query),
        group=group,
        version=version,
        resource=resource,
        namespace=namespace,
        name=name,
        subresource=subresource,
    )


def _verb(method: str, name: str | None, query: Mapping[str, str]) -> str:
    if method == "GET":
        if is_true(query.get("watch")):
            return "watch"
        return "get" if name else "list"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return _METHOD_VERBS.get(method, method.lower())
