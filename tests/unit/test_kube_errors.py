"""What a user reads when the API server says no: the error type and its actionable words."""

from __future__ import annotations

import json

import pytest

from bot.core import errors
from bot.kube import errors as kube_errors
from bot.kube import kinds
from bot.kube.errors import Call


def status_body(code: int, reason: str, message: str) -> bytes:
    return json.dumps(
        {"kind": "Status", "code": code, "reason": reason, "message": message}
    ).encode()


def test_forbidden_names_the_missing_verb_resource_and_group() -> None:
    call = Call("get", kinds.KAI_CONFIG, "kai-config")
    body = status_body(403, "Forbidden", 'configs.kai.scheduler "kai-config" is forbidden')
    error = kube_errors.from_status(403, body, call, "prod")
    assert isinstance(error, errors.KubeForbidden)
    assert "grant verb 'get' on resource 'configs' in API group kai.scheduler" in str(error)
    assert "cluster prod" in str(error)


def test_forbidden_in_a_namespace_says_which_namespace() -> None:
    call = Call("patch", kinds.SCALED_JOB, "annia-worker", "annia")
    error = kube_errors.from_status(403, status_body(403, "Forbidden", "no"), call, "prod")
    assert "in namespace annia" in str(error)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (404, errors.KubeNotFound),
        (401, errors.KubeForbidden),
        (409, errors.KubeConflict),
        (422, errors.KubeInvalid),
        (400, errors.KubeInvalid),
        (500, errors.KubeUnavailable),
        (429, errors.KubeUnavailable),
    ],
    ids=["not-found", "unauthorized", "conflict", "invalid", "bad-request", "server", "throttled"],
)
def test_each_status_becomes_its_own_error_type(status: int, expected: type) -> None:
    call = Call("get", kinds.APISERVICE, "v1beta1.external.metrics.k8s.io")
    assert isinstance(kube_errors.from_status(status, b"{}", call, "prod"), expected)


def test_a_non_status_body_is_cut_short_in_the_message() -> None:
    call = Call("get", kinds.KAI_CONFIG, "kai-config")
    error = kube_errors.from_status(502, b"x" * 5000, call, "prod")
    assert len(str(error)) < 500


@pytest.mark.parametrize(
    ("header", "seconds"),
    [(None, None), ("", None), ("2", 2.0), ("0", 0.0), ("3600", 10.0), ("soon", None)],
    ids=["absent", "empty", "two", "zero", "capped", "not-a-number"],
)
def test_retry_after_is_read_and_capped(header: str | None, seconds: float | None) -> None:
    assert kube_errors.parse_retry_after(header) == seconds


def test_only_throttling_and_server_errors_are_retried() -> None:
    assert [s for s in (400, 403, 404, 409, 422, 429, 500, 503) if kube_errors.is_retryable(s)] == [
        429,
        500,
        503,
    ]


class MaxRetryError(Exception):
    """urllib3's shape: the cause in `reason`."""

    def __init__(self, message: str, reason: BaseException) -> None:
        super().__init__(message)
        self.reason = reason


class NewConnectionError(Exception):
    pass


def refused() -> BaseException:
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as e:
            raise NewConnectionError("Failed to establish a new connection: [Errno 111]") from e
    except NewConnectionError as e:
        return MaxRetryError("HTTPSConnectionPool(host='127.0.0.1', port=1): Max retries", e)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        pytest.param(refused(), "connection refused", id="refused-under-urllib3"),
        pytest.param(TimeoutError("timed out"), "no answer within the timeout", id="timeout"),
        pytest.param(OSError(101, "Network is unreachable"), "Network is unreachable",
                     id="any-other-os-error-in-its-own-words"),
        pytest.param(ValueError("word " * 60), ("word " * 31).strip() + "…",
                     id="long-text-cut-at-a-word"),
    ],
)  # fmt: skip
def test_a_failed_connection_is_said_in_words(error: BaseException, words: str) -> None:
    assert kube_errors.connection_words(error) == words


def test_an_unreachable_server_is_one_line_naming_it() -> None:
    call = Call("get", kinds.KAI_CONFIG, "kai-config")
    error = kube_errors.from_connection_error(refused(), call, "prod", "https://127.0.0.1:1")
    assert str(error) == (
        "cluster prod: cannot reach the API server at https://127.0.0.1:1: connection refused "
        '(to get configs.kai.scheduler "kai-config" (cluster-scoped))'
    )


def test_a_long_body_that_is_not_a_status_is_cut_at_a_word() -> None:
    body = "<html> " + "proxy error " * 40
    said = kube_errors.status_message(body.encode())
    assert len(said) <= kube_errors.MAX_BODY_IN_MESSAGE and said.endswith("…")
    assert body.startswith(said.removesuffix("…") + " ")  # whole words only
