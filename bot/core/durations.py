"""Compact durations as people type them (`30s`, `2h`, `1d`, `1h30m`) and back, and Go's
durations as controllers write them (`5m0s`, `1.5h`).

Pure: used by the configuration parser, the slash-command parser and the rules that read
durations from objects; no clock, no I/O.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Literal

EXPECTED = "expected a duration like 30m, 2h, 1d or 1h30m"

# Units at most once each, largest first: "1h30m" and "90m" parse, "30m1h" and "1h1h" do not.
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", re.IGNORECASE | re.ASCII)
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
# Go's time.ParseDuration: a sequence of decimal numbers, each with a unit.
_GO_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
# Longer than anything on call plans for, and far from timedelta's overflow at `now + d`.
LONGEST = timedelta(days=365)


def parse_duration(text: str) -> timedelta:
    """Read a positive duration such as `30s`, `30m`, `2h`, `1d`, `1h30m` or `1d2h`.

    Raises:
        ValueError: the text is not such a duration, or it is zero or over 365 days; the
            message says what is expected.
    """
    match = _DURATION.fullmatch(text.strip())
    if not text.strip() or match is None:
        raise ValueError(f"{text!r} is not a duration ({EXPECTED})")
    seconds = sum(
        int(amount or 0) * factor
        for amount, (_, factor) in zip(match.groups(), _UNITS, strict=True)
    )
    if seconds == 0:
        raise ValueError(f"{text!r} is zero ({EXPECTED}, longer than zero)")
    if seconds > LONGEST.total_seconds():
        raise ValueError(f"{text!r} is too long ({EXPECTED}, at most 365d)")
    return timedelta(seconds=seconds)


def is_duration(word: str) -> bool:
    """Whether `parse_duration` reads `word` (a command telling a DURATION from other words)."""
    try:
        parse_duration(word)
    except ValueError:
        return False
    return True


# How finely `format_duration` shows a duration (see there).
Precision = Literal["second", "minute", "coarse"]


def format_duration(td: timedelta, precision: Precision = "second") -> str:
    """The compact form of `td`, as fine as `precision` says:

    - `"second"`: every unit down to whole seconds, signed: `1d2h3m4s`, `-5m`; `0s` for zero.
    - `"minute"`: whole minutes, at least `1m` (the Home tab's "fired 1m ago", never "0s ago").
    - `"coarse"`: to the hour from a day up, to the minute from a minute up, never negative,
      where a glance is enough (health headlines, how long pods waited): `2d4h`, `1h30m`, `25m`.
    """
    seconds = int(td.total_seconds())
    if precision == "minute":
        seconds = max(60, seconds // 60 * 60)
    elif precision == "coarse":
        seconds = max(seconds, 0)
        step = 3600 if seconds >= 86400 else 60 if seconds >= 60 else 1
        seconds -= seconds % step
    return _compact(seconds)


def _compact(seconds: int) -> str:
    if seconds < 0:
        return "-" + _compact(-seconds)
    parts = []
    for unit, factor in _UNITS:
        amount, seconds = divmod(seconds, factor)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts) or "0s"


def parse_go_duration(text: str) -> timedelta:
    """Go's `time.ParseDuration` (`8h`, `1h30m`, `90s`, `1.5h`, `5m0s`): how Kubernetes objects
    carry a `metav1.Duration`.

    Raises:
        ValueError: anything Go would refuse (`cannot parse duration '...'`).
    """
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return timedelta()
    parts = _GO_DURATION.findall(body)
    valid = body and "".join(n + u for n, u in parts) == body
    if not valid or any(n in ("", ".") for n, _ in parts):
        raise ValueError(f"cannot parse duration '{text}'")
    seconds = sum(float(n) * _GO_UNITS[u] for n, u in parts)
    return timedelta(seconds=-seconds if text.startswith("-") else seconds)
