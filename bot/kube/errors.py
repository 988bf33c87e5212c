"""Turn what the Kubernetes API answered into the project's own errors, with actionable words.

Pure: takes the status, the `kind: Status` body and what was asked, never the client's types.
Bodies that are not a Status are cut short so nothing large (or secret) reaches a message or a log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.core import errors
from bot.kube.kinds import ResourceRef

MAX_BODY_IN_MESSAGE = 256
MAX_RETRY_AFTER_SECONDS = 10.0


@dataclass(frozen=True)
class Call:
    """What the gateway asked of the API, for messages: `get configs.kai.scheduler "kai-config"`."""

    verb: str
    ref: ResourceRef
    name: str | None = None
    namespace: str | None = None

    def describe(self) -> str:
        target = self.ref.qualified + (f' "{self.name}"' if self.name else "")
        return f"{self.verb} {target}{self.scope()}"

    def scope(self) -> str:
        if self.ref.namespaced and self.namespace:
            return f' in namespace "{self.namespace}"'
        return " across all namespaces" if self.ref.namespaced else " (cluster-scoped)"


def is_retryable(status: int) -> bool:
    """429 and 5xx are worth another try: the server did not act, or may act next time."""
    return status == 429 or status >= 500


def surely_not_sent(error: BaseException) -> bool:
    """No connection was made (refused, DNS, connect timeout): nothing reached the server."""
    reason = getattr(error, "reason", error)
    names = {type(reason).__name__, type(error).__name__}
    return bool(names & {"NewConnectionError", "ConnectTimeoutError", "NameResolutionError"})


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header, capped so a chat reply never waits for minutes."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER_SECONDS))


def status_message(body: bytes | str | None) -> str:
    """The `message` of a `kind: Status` body, or the body itself cut to a safe length."""
    if body is None:
        return ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        return str(parsed.get("message", ""))
    return cut_at_word(text, MAX_BODY_IN_MESSAGE)


def from_status(
    status: int, body: bytes | str | None, call: Call, cluster: str, acting_as: str = ""
) -> errors.KubeError:
    """The project error for an HTTP error status from the API server (`acting_as`: the
    identity the request was sent as, when it impersonated a person)."""
    said = status_message(body)
    where = f"cluster {cluster}: {call.describe()}"
    if status == 403 and acting_as:
        return errors.KubeForbidden(_refused_as(call, cluster, said, acting_as))
    if status == 404:
        return errors.KubeNotFound(
            f"{where}: not found ({said})" if said else f"{where}: not found"
        )
    if status == 403:
        return errors.KubeForbidden(_forbidden_text(call, cluster, said))
    if status == 401:
        return errors.KubeForbidden(
            f"{where}: the API server did not accept our credentials (401 Unauthorized); "
            "check the kubeconfig user or the service account token"
        )
    if status == 409:
        return errors.KubeConflict(f"{where}: the object changed meanwhile; try again ({said})")
    if status == 410:
        return errors.KubeExpired(f"{where}: the list moved on while it was read (410 {said})")
    if status in (400, 422):
        return errors.KubeInvalid(f"{where}: the API server rejected the request: {said}")
    return errors.KubeUnavailable(f"{where}: the API server answered {status}: {said}".rstrip(": "))


def _forbidden_text(call: Call, cluster: str, said: str) -> str:
    group = call.ref.group or '""  (core)'
    where = "in namespace " + call.namespace if call.ref.namespaced and call.namespace else ""
    grant = f"grant verb '{call.verb}' on resource '{call.ref.plural}' in API group {group}"
    return (
        f"cluster {cluster}: kai-chatops is not allowed to {call.describe()}; "
        f"{grant}{' ' + where if where else ''} to its service account or kubeconfig user "
        f"(see deploy/ RBAC). API server said: {said}"
    )


def _refused_as(call: Call, cluster: str, said: str, acting_as: str) -> str:
    """A 403 of a request sent as a person: either kai-chatops may not impersonate them, or
    the person may not make this change. Kubernetes' own words come last, unchanged."""
    if "cannot impersonate" in said:
        return (
            f"cluster {cluster}: kai-chatops may not act as {acting_as} to {call.describe()}; "
            "nothing was changed. Grant it impersonation (deploy/components/impersonation). "
            f"API server said: {said}"
        )
    return (
        f"cluster {cluster}: Kubernetes refused to let {acting_as} {call.describe()}; nothing "
        f"was changed (the change was sent as that person). API server said: {said}"
    )


def from_connection_error(
    error: BaseException, call: Call, cluster: str, server: str = ""
) -> errors.KubeError:
    """The project error for a connection failure or timeout (no HTTP answer at all), in one
    line a person reads: where, what failed, and what was being asked."""
    at = f" at {server}" if server else ""
    return errors.KubeUnavailable(
        f"cluster {cluster}: cannot reach the API server{at}: {connection_words(error)} "
        f"(to {call.describe()})"
    )


# The failures a connection ends in, by the class names urllib3 and the standard library give
# them (this module imports neither), most specific first.
_CONNECTION_WORDS = (
    ("ConnectionRefusedError", "connection refused"),
    ("NameResolutionError", "the host name does not resolve"),
    ("gaierror", "the host name does not resolve"),
    ("ConnectTimeoutError", "no connection within the timeout"),
    ("ReadTimeoutError", "no answer within the timeout"),
    ("TimeoutError", "no answer within the timeout"),
    ("ConnectionResetError", "the connection was reset"),
    ("ConnectionAbortedError", "the connection was closed"),
    ("SSLCertVerificationError", "its TLS certificate is not trusted"),
    ("SSLError", "the TLS handshake failed"),
)
MAX_ERROR_WORDS = 160


def connection_words(error: BaseException) -> str:
    """`connection refused`, `the host name does not resolve`, …: the cause of a failed
    connection in words, found down the chain urllib3 wraps it in (`MaxRetryError.reason`,
    `__cause__`); anything else as its message, shortened at a word."""
    chain = _causes(error)
    names = {type(e).__name__ for e in chain}
    for name, words in _CONNECTION_WORDS:
        if name in names:
            return words
    deepest = chain[-1]
    text = getattr(deepest, "strerror", None) or str(deepest) or type(deepest).__name__
    return cut_at_word(str(text), MAX_ERROR_WORDS)


def _causes(error: BaseException) -> list[BaseException]:
    """`error`, then what it wraps (`reason`, `__cause__`, `__context__`), outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        reason = getattr(current, "reason", None)
        wrapped = reason if isinstance(reason, BaseException) else None
        current = wrapped or current.__cause__ or current.__context__
    return chain


def cut_at_word(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a space and ending in `…` when shortened."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(" ,;:(") + "…"
