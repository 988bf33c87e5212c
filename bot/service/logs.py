"""Logging set-up: one JSON object per line in a cluster, readable text locally; secrets redacted.

Every record passes a filter that replaces Slack tokens (by shape) and the configured secrets (by
value) with `[redacted]`, whatever logged them: our code, Bolt, slack_sdk or aiohttp.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TextIO

TOKEN_SHAPE = re.compile(r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]+")
REDACTED = "[redacted]"
FIELDS = ("cluster", "user", "command", "object", "outcome")


class RedactSecrets(logging.Filter):
    """Rewrites each record's message so no token or secret reaches a handler."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 8]

    def redact(self, text: str) -> str:
        text = TOKEN_SHAPE.sub(REDACTED, text)
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    """time, level, event, logger, and the context fields a record carries (cluster, user, ...)."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            "logger": record.name,
        }
        line |= {key: getattr(record, key) for key in FIELDS if hasattr(record, key)}
        if record.exc_text:
            line["error"] = record.exc_text
        return json.dumps(line, default=str)


class CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is at the time (test runners swap and close it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def configure(log_format: str, secrets: Iterable[str] = (), level: int = logging.INFO) -> None:
    """Route every logger through one handler with the chosen format and the secret filter."""
    handler = CurrentStderr()
    handler.addFilter(RedactSecrets(secrets))
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # APScheduler logs every run at INFO; its warnings (a skipped, overlapping run) still show.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
