"""Logs are one JSON object per line with the context fields, and never carry a secret."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

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
