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
