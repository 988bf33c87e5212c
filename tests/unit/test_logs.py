"""Logs are one JSON object per line with the context fields, and never carry a secret."""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bot.service import logs

SECRET = "signing-secret-abcdef123456"


@pytest.fixture
def json_logs() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    logs.configure("json", secrets=[SECRET])
    yield
    root.handlers[:], root.level = saved[0], saved[1]


def lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().err.splitlines()]


def test_a_line_is_json_with_time_level_event_and_context(
    json_logs: None, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("kai_chatops.audit").info(
        "paused",
        extra={
            "cluster": "prod",
            "user": "U1",
            "command": "pause",
            "object": "a/b",
            "outcome": "done",
        },
    )
    [line] = lines(capsys)
    assert line["event"] == "paused" and line["level"] == "info" and "time" in line
    assert {line[k] for k in ("cluster", "user", "command", "object", "outcome")} == {
        "prod", "U1", "pause", "a/b", "done",
    }  # fmt: skip


def test_tokens_and_configured_secrets_are_redacted_even_in_tracebacks(
    json_logs: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logging.getLogger("slack_sdk.web")
    log.warning("sending with token %s", "xoxb-1234-5678-abcdefghij")
    try:
        raise RuntimeError(f"bad signature with {SECRET} and xapp-1-A0-zzz")
    except RuntimeError:
        log.exception("request failed")
    text = json.dumps(lines(capsys))
    assert "xoxb-1234" not in text and "xapp-1-A0" not in text and SECRET not in text
    assert text.count("[redacted]") >= 3  # the message, and the traceback (source line too)


TOKENS = {
    "bot": "xoxb-1234-5678-abcdefghij",
    "user": "xoxp-1234-5678-abcdefghij",
    "refresh": "xoxe-1-My0xLTEyMzQ1Njc4OTAtYWJj",
    "rotated user": "xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtYWJj",
    "client": "xoxc-1234567890-1234567890-abcdef",
    "cookie": "xoxd-abc%2Fdef%3D%3D",
    "app": "xapp-1-A0123-4567-abcdef",
}


@pytest.mark.parametrize("token", list(TOKENS.values()), ids=list(TOKENS))
def test_every_slack_token_shape_is_redacted_in_the_message_and_in_extra_fields(
    json_logs: None, capsys: pytest.CaptureFixture[str], token: str
) -> None:
    logging.getLogger("kai_chatops.audit").info(
        "using %s",
        token,
        extra={"user": f"U1 ({token})", "object": [f"a {token}"], "details": {"t": token}},
    )
    [line] = lines(capsys)
    assert token not in json.dumps(line)
    assert line["event"] == "using [redacted]" and line["user"] == "U1 ([redacted])"


def test_extra_fields_are_redacted_for_every_handler_not_only_the_json_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("kai_chatops.test_redaction")
    log.addFilter(logs.RedactSecrets([SECRET]))
    try:
        with caplog.at_level(logging.INFO, logger=log.name):
            shapes = {"items": ("a", SECRET, 7), "map": {"k": "v", "s": SECRET}}
            log.info("ok", extra={"command": f"secret {SECRET}", "outcome": 3, **shapes})
    finally:
        log.filters.clear()
    [record] = caplog.records
    assert record.__dict__["command"] == "secret [redacted]"
    assert record.__dict__["outcome"] == 3
    assert record.__dict__["items"] == ("a", "[redacted]", 7)  # each item, the shape kept
    assert record.__dict__["map"] == {"k": "v", "s": "[redacted]"}


# Issue 36 (make mutate): what the log filter and formats promise, each as an operator reads it.
@pytest.mark.parametrize(("secret", "redacted"), [("12345678", True), ("1234567", False)])
def test_configured_secrets_of_eight_characters_or_more_are_redacted_by_value(
    secret: str, redacted: bool
) -> None:
    assert (logs.RedactSecrets([secret]).redact(f"x {secret} y") == "x [redacted] y") is redacted


def test_a_json_line_names_its_logger_a_utc_time_and_the_error_of_a_traceback(
    json_logs: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logging.getLogger("kai_chatops.test_json")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("failed", extra={"cluster": datetime(2026, 1, 1, tzinfo=UTC)})
    [line] = lines(capsys)
    assert line["logger"] == "kai_chatops.test_json" and line["level"] == "error"
    assert str(line["time"]).endswith("+00:00")
    assert "ValueError: boom" in str(line["error"])
    assert line["cluster"] == "2026-01-01 00:00:00+00:00"  # what JSON cannot carry, as text


def test_text_lines_warnings_and_the_schedulers_chatter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    logging.captureWarnings(False)  # as a fresh process starts: an earlier test configured it
    logs.configure("text")
    try:
        logging.getLogger("kai_chatops.x").info("hello")
        # What `warnings` calls to show one (the tests' own filter makes warnings errors).
        warnings.showwarning("unverified HTTPS request", UserWarning, "urllib3.py", 1)
        logging.getLogger("apscheduler.scheduler").info("Running job")
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
        logging.captureWarnings(False)
    text = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(text) == 2, text  # the scheduler's INFO is not among them
    assert text[0].endswith(" INFO kai_chatops.x hello")
    assert " WARNING py.warnings " in text[1] and "unverified HTTPS request" in text[1]
