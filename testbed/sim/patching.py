"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) applied to plain JSON values.

Pure: returns new values and never mutates its inputs. A malformed patch document raises
`ApiError(400)`; a patch that does not apply (a failing `test`, a missing path, an unknown op)
raises `ApiError(422)` with kube-apiserver's bare message.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from testbed.sim.status import ApiError

_REJECTED = "the server rejected our request due to an error in our request"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, `null` deletes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: apply `operations` in order to a copy of `target`.

    Raises:
        ApiError: 400 for a malformed document, 422 when an operation does not apply.
    """
    if not isinstance(operations, list):
        raise _undecodable(operations, "[]handlers.jsonPatchOp")
    document = copy.deepcopy(target)
    for operation in operations:
        document = _apply_operation(document, operation)
    return document


def merge_patch_document(patch: Any) -> dict[str, Any]:
    """A merge patch as the server decodes it: a JSON object.

    Raises:
        ApiError: 400 for any other JSON value, worded as Go's decoder words it.
    """
    if not isinstance(patch, dict):
        raise _undecodable(patch, "map[string]interface {}")
    return patch


def _undecodable(value: Any, go_type: str) -> ApiError:
    """400 for a patch document of the wrong JSON type (k8s.io/apiserver
    pkg/endpoints/handlers/patch.go: `error decoding patch: ` and encoding/json's message)."""
    json_type = "null"
    if isinstance(value, bool):
        json_type = "bool"
    elif isinstance(value, (int, float)):
        json_type = "number"
    elif isinstance(value, str):
        json_type = "string"
    elif isinstance(value, list):
        json_type = "array"
    elif isinstance(value, dict):
        json_type = "object"
    return ApiError(
        400,
        f"error decoding patch: json: cannot unmarshal {json_type} into Go value of type {go_type}",
    )


def _apply_operation(document: Any, operation: Any) -> Any:
    if not isinstance(operation, dict):
        raise _undecodable(operation, "handlers.jsonPatchOp")
    if not isinstance(operation.get("path"), str):
        raise _rejected()
    op, path = operation.get("op"), operation["path"]
    handler = _HANDLERS.get(str(op))
    if handler is None:
        raise _rejected()
    return handler(document, path, operation)


def _rejected() -> ApiError:
    """422 for an operation that does not apply: kube-apiserver says no more than this (its
    json-patch library's error is not in the answer) and sends empty details."""
    return ApiError(422, _REJECTED, reason="Invalid", details={})


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(400, f"json pointer must start with '/': {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _missing(path: str) -> ApiError:
    return _rejected()


def _parent(document: Any, path: str) -> tuple[Any, str]:
    parts = _pointer(path)
    if not parts:
        raise _rejected()
    node = document
    for part in parts[:-1]:
        node = _child(node, part, path)
    return node, parts[-1]


def _child(node: Any, part: str, path: str) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list):
        return node[_index(node, part, path, allow_end=False)]
    raise _missing(path)


def _index(node: list[Any], part: str, path: str, *, allow_end: bool) -> int:
    if allow_end and part == "-":
        return len(node)
    if not part.isdigit():
        raise _missing(path)
    index = int(part)
    if index > len(node) or (index == len(node) and not allow_end):
        raise _missing(path)
    return index


def _value(operation: dict[str, Any]) -> Any:
    if "value" not in operation:
        raise ApiError(400, f"json patch operation {operation['op']!r} needs a value")
    return copy.deepcopy(operation["value"])


def _read(document: Any, path: str) -> Any:
    node = document
    for part in _pointer(path):
        node = _child(node, part, path)
    return node


def _add(document: Any, path: str, operation: dict[str, Any]) -> Any:
    return _insert(document, path, _value(operation))


def _insert(document: Any, path: str, value: Any) -> Any:
    if path == "":
        return value
    parent, key = _parent(document, path)
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, key, path, allow_end=True), value)
    else:
        raise _missing(path)
    return document


def _remove(document: Any, path: str, operation: dict[str, Any]) -> Any:
    parent, key = _parent(document, path)
    if isinstance(parent, dict) and key in parent:
        del parent[key]
    elif isinstance(parent, list):
        del parent[_index(parent, key, path, allow_end=False)]
    else:
        raise _missing(path)
    return document


def _replace(document: Any, path: str, operation: dict[str, Any]) -> Any:
    value = _value(operation)
    if path == "":
        return value
    parent, key = _parent(document, path)
    if isinstance(parent, dict):  # a missing key is added, as kube-apiserver's json-patch does
        parent[key] = value
        return document
    _read(document, path)
    if isinstance(parent, list):
        parent[_index(parent, key, path, allow_end=False)] = value
    else:
        parent[key] = value
    return document


def _move(document: Any, path: str, operation: dict[str, Any]) -> Any:
    source = str(operation.get("from", ""))
    value = copy.deepcopy(_read(document, source))
    document = _remove(document, source, operation)
    return _insert(document, path, value)


def _copy(document: Any, path: str, operation: dict[str, Any]) -> Any:
    value = copy.deepcopy(_read(document, str(operation.get("from", ""))))
    return _insert(document, path, value)


def _test(document: Any, path: str, operation: dict[str, Any]) -> Any:
    if _read(document, path) != operation.get("value"):
        raise _rejected()
    return document


_HANDLERS: dict[str, Callable[[Any, str, dict[str, Any]], Any]] = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "copy": _copy,
    "test": _test,
}
