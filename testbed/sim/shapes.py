"""Response shapes a client may ask for in `Accept`: plain JSON or metadata only.

Pure: `negotiate` reads the Accept header; `to_partial` strips objects to PartialObjectMetadata.
Table (`as=Table`) is not produced: kubectl then falls back to printing NAME and AGE itself.
"""

from __future__ import annotations

from typing import Any, Literal

Shape = Literal["json", "partial"]


def negotiate(accept: str) -> Shape:
    """The first shape in the Accept header this server can produce (plain JSON by default)."""
    for media_range in accept.split(","):
        kind, *params = [part.strip() for part in media_range.split(";")]
        if kind not in ("application/json", "*/*", "application/*"):
            continue
        options = dict(p.split("=", 1) for p in params if "=" in p)
        wanted = options.get("as")
        if wanted is None:
            return "json"
        if wanted in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            return "partial"
    return "json"


def to_partial(body: dict[str, Any]) -> dict[str, Any]:
    """An object or a list reduced to apiVersion, kind and metadata (meta.k8s.io/v1)."""
    if "items" in body:
        items = [to_partial(item) for item in body["items"]]
        return {
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": body.get("metadata", {}),
            "items": items,
        }
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": body.get("metadata", {}),
    }
