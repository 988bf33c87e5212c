"""API errors of the simulated server and the `kind: Status` bodies that carry them.

Pure: builds dicts shaped like a real kube-apiserver's, and owns the one exception type the
simulator raises (`ApiError`); the server turns it into an HTTP answer.
"""

from __future__ import annotations

from typing import Any

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

CONFLICT_TAIL = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


class ApiError(Exception):
    """A request the simulated API server refuses; `status_body()` is what it answers."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        list_meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details = details
        self.list_meta = list_meta or {}  # a Status's ListMeta: the inconsistent `continue`

    def status_body(self) -> dict[str, Any]:
        """The `kind: Status` JSON a real API server sends for this error."""
        body = failure_status(self.code, self.reason, self.message, self.details)
        body["metadata"] = dict(self.list_meta)
        return body


def failure_status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A `kind: Status` body with `status: Failure`."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


def qualified(plural: str, group: str) -> str:
    """`configs.kai.scheduler`, or just `configmaps` for the core group."""
    return f"{plural}.{group}" if group else plural


def _details(plural: str, group: str, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    return details


def not_found(plural: str, group: str, name: str) -> ApiError:
    """404 `configs.kai.scheduler "kai-config" not found`."""
    message = f'{qualified(plural, group)} "{name}" not found'
    return ApiError(404, message, details=_details(plural, group, name))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    """409 AlreadyExists on a create of a name that is taken."""
    message = f'{qualified(plural, group)} "{name}" already exists'
    return ApiError(409, message, reason="AlreadyExists", details=_details(plural, group, name))


def conflict(plural: str, group: str, name: str) -> ApiError:
    """409 Conflict for a stale `metadata.resourceVersion`."""
    message = (
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {CONFLICT_TAIL}'
    )
    return ApiError(409, message, reason="Conflict", details=_details(plural, group, name))


def invalid(kind: str, group: str, name: str, cause: str) -> ApiError:
    """422 Invalid: `Config.kai.scheduler "x" is invalid: <cause>`, with the cause (`field:
    message`) in `details.causes`, which kubectl prints."""
    message = f'{qualified(kind, group)} "{name}" is invalid: {cause}'
    details: dict[str, Any] = {"name": name} if name else {}  # Go's omitempty
    details["kind"] = kind
    if group:
        details["group"] = group
    field, colon, said = cause.partition(": ")
    several = cause.startswith("[") and not cause.startswith("[]:")  # `[]` names the object
    if colon and not several:
        reason = next((r for p, r in _CAUSE_REASONS if said.startswith(p)), "FieldValueInvalid")
        details["causes"] = [{"reason": reason, "message": said, "field": field}]
    return ApiError(422, message, reason="Invalid", details=details)


# k8s.io/apimachinery pkg/util/validation/field/errors.go: each error type's message prefix.
_CAUSE_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Forbidden", "FieldValueForbidden"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Invalid value", "FieldValueInvalid"),
    ("Too long", "FieldValueTooLong"),
)


def resource_not_found() -> ApiError:
    """404 for a path that names no served resource (an unknown type or a deleted CRD's)."""
    return ApiError(404, "the server could not find the requested resource")


def too_large_resource_version(requested: int, current: int) -> ApiError:
    """504 for a list at a resourceVersion the store has not reached (k8s.io/apiserver
    pkg/storage/errors.go `NewTooLargeResourceVersionError`)."""
    details = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    message = f"Timeout: Too large resource version: {requested}, current: {current}"
    return ApiError(504, message, reason="Timeout", details=details)


def gone(requested: str, oldest: int) -> ApiError:
    """410 Expired for a watch or continue token older than the kept history."""
    return ApiError(410, f"too old resource version: {requested} ({oldest})", reason="Expired")


# k8s.io/apiserver pkg/storage/etcd3/errors.go `inconsistentContinue`
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def continue_expired(inconsistent_token: str) -> ApiError:
    """410 Expired for a continue token whose snapshot was compacted away, carrying the token
    that lists the rest from the current state instead."""
    meta = {"continue": inconsistent_token}
    return ApiError(410, INCONSISTENT_CONTINUE, reason="Expired", list_meta=meta)
