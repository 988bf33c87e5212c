"""Logging set-up: one JSON object per line in a cluster, readable text locally; secrets redacted.

Every record passes a filter that replaces secret-shaped text (`bot.core.redaction`, the same
rules as for what the cluster says: tokens of every Slack shape, `password='…'`, URL passwords,
...) and the configured secrets (by value) with `[redacted]`, whatever logged them (our code,
Bolt, slack_sdk or aiohttp), in the message, the traceback and every `extra` field.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO

from bot.core import redaction

# What every LogRecord has; anything else on a record came from `extra`.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
}
FIELDS = ("cluster", "user", "command", "object", "outcome")


class RedactSecrets(logging.Filter):
    """Rewrites each record's message so no token or secret reaches a handler."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 8]

    def redact(self, text: str) -> str:
        text = redaction.redact(text)
        for secret in self._secrets:
            text = text.replace(secret, redaction.REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        for key in record.__dict__.keys() - _STANDARD:
            setattr(record, key, self._redact_value(getattr(record, key)))
        return True

    def _redact_value(self, value: Any) -> Any:
        """Strings redacted, inside lists, tuples and dicts too; anything else as it is."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list | tuple):
            return type(value)(self._redact_value(item) for item in value)
        if isinstance(value, dict):
            return {key: self._redact_value(item) for key, item in value.items()}
        return value


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
    # Python warnings (urllib3's InsecureRequestWarning for a kubeconfig that skips TLS checks)
    # become log records at WARNING, formatted and filtered like the rest, not raw stderr lines.
    logging.captureWarnings(True)
    # APScheduler logs every run at INFO; its warnings (a skipped, overlapping run) still show.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
