"""Converters for configuration values: each checks one value and says what was expected.

Pure; used by `bot.config.settings` to read every key. A converter returns the typed value or raises
ValueError with a message naming the value and the expectation (one problem line each).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

from bot.core import durations

T = TypeVar("T")

LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
SUBDOMAIN = re.compile(
    r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
COMMAND = re.compile(r"/[a-z0-9_-]{1,31}")
CHANNEL = re.compile(r"[CG][A-Z0-9]{2,}")  # Slack does not promise a length
PRINCIPAL = re.compile(r"[UWS][A-Z0-9]{2,}|@[a-z0-9][a-z0-9._-]*")
PRINCIPAL_EXPECTED = "a user ID like U0123ABCD, a user-group ID like S0123ABCD or '@a-group'"


NAME = "lowercase letters, digits and '-'"
TEXT = re.compile(r".*\S.*", re.DOTALL)
MAX_RECONCILE_WAIT = timedelta(minutes=25)
MAX_REQUEST_TIMEOUT = timedelta(seconds=60)
SHORTCUT_KINDS = {
    "helmrelease": "HelmRelease",
    "hr": "HelmRelease",
    "kustomization": "Kustomization",
    "ks": "Kustomization",
    "application": "Application",
    "app": "Application",
}
SHORTCUT_HINTS = {
    "kind": "helmrelease, kustomization or application",
    "name": "NAMESPACE/NAME of that object, like flux-system/kai-scheduler",
}


def show(value: object) -> str:
    """The value as a problem line quotes it: 'text' for strings, YAML-like otherwise."""
    shown = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def matching(
    pattern: re.Pattern[str], what: str, expected: str, transform: Callable[[str], str] = str
) -> Callable[[object], str]:
    def convert(value: object) -> str:
        if isinstance(value, str) and pattern.fullmatch(value):
            return transform(value)
        raise ValueError(f"{show(value)} is not {what} (expected {expected})")

    return convert


def list_of(convert_item: Callable[[object], T]) -> Callable[[object], tuple[T, ...]]:
    def convert(value: object) -> tuple[T, ...]:
        if not isinstance(value, list):
            raise ValueError(f"{show(value)} is not a list (expected a list like [a, b])")
        items, problems = [], []
        for index, item in enumerate(value):
            try:
                items.append(convert_item(item))
            except ValueError as e:
                problems.append(f"[{index}]: {e}")
        if problems:
            raise ValueError("\n".join(problems))
        return tuple(items)

    return convert


def duration(value: object) -> timedelta:
    try:
        return durations.parse_duration(value if isinstance(value, str) else "")
    except ValueError:
        expected = "expected a duration like 30s, 5m, 2h or 1h30m"
        raise ValueError(f"{show(value)} is not a duration ({expected})") from None


def command(value: object) -> str:
    if isinstance(value, str) and not value.startswith("/"):
        raise ValueError(f"{value!r} must start with '/'")
    return matching(COMMAND, "a slash command", f"'/' then {NAME} or '_', like /kai")(value)


def viewers(value: object) -> tuple[str, ...] | None:
    if isinstance(value, list):
        return principals(value)
    if value == "everyone":
        return None
    raise ValueError(f"{show(value)} is not everyone or a list (expected either, like operators)")


def hold(value: object) -> timedelta:
    """A duration, or 0 / 0s: fire on the first bad check and resolve on the first clear one."""
    if value in (0, "0", "0s"):
        return timedelta(0)
    return duration(value)


def duration_or_off(value: object) -> timedelta:
    """A duration, or 0 / 0s for "off" (the feature it sets does nothing)."""
    return hold(value)


def stall_wait(value: object) -> timedelta:
    """0 (off), or at least 15s: a KAI scheduler's Lease lasts 15 s (cmd/scheduler/app/server.go),
    so a younger renewal says nothing."""
    wait = duration_or_off(value)
    if timedelta(0) < wait < timedelta(seconds=15):
        raise ValueError(
            f"{show(value)} is shorter than a KAI scheduler's Lease (15s), which it renews every "
            "few seconds (expected 0 for off, or 15s or more, like 5m)"
        )
    return wait


def cluster_count(value: object) -> int:
    """0 (off) or at least 2: one cluster alone is not a fleet-wide incident."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (value == 0 or 2 <= value <= 1000)
    ):
        return value
    raise ValueError(f"{show(value)} is not a cluster count (expected 0 for off, or 2 to 1000)")


def flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"{show(value)} is not true or false (expected one of them)")


def impersonation(value: object) -> str:
    if value in ("none", "email", "id"):
        return str(value)
    raise ValueError(f"{show(value)} is not an impersonation mode (expected none, email or id)")


def notice_channels(value: object) -> dict[str, str]:
    """namespace -> channel ID; the key "*" is the default for every other namespace."""
    if not isinstance(value, dict):
        raise ValueError(f"{show(value)} is not a mapping (expected namespace: channel ID pairs)")
    channels, problems = {}, []
    for key, item in value.items():
        try:
            name = key if key == "*" else namespace(key)
            channels[str(name)] = channel(item)
        except ValueError as e:
            problems.append(f"[{show(key)}]: {e}")
    if problems:
        raise ValueError("\n".join(problems))
    return channels


def failure_count(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
        return value
    raise ValueError(f"{show(value)} is not a failure count (expected a whole number, 1 to 100)")


def auto_flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if value == "auto":
        return None
    raise ValueError(f"{show(value)} is not true, false or auto (expected one of them)")


def retries(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10:
        return value
    raise ValueError(f"{show(value)} is not a retry count (expected a whole number, 0 to 10)")


def threads(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 4 <= value <= 64:
        return value
    raise ValueError(f"{show(value)} is not a thread count (expected a whole number, 4 to 64)")


def as_is(value: object) -> object:
    return value


def shortcut_kind(value: object) -> str:
    if isinstance(value, str) and value.lower() in SHORTCUT_KINDS:
        return SHORTCUT_KINDS[value.lower()]
    raise ValueError(f"{show(value)} is not a shortcut kind (expected {SHORTCUT_HINTS['kind']})")


def namespaced_name(value: object) -> tuple[str, str]:
    if isinstance(value, str):
        namespace, slash, name = value.partition("/")
        if slash and LABEL.fullmatch(namespace) and SUBDOMAIN.fullmatch(name):
            return namespace, name
    raise ValueError(f"{show(value)} is not NAMESPACE/NAME (expected {SHORTCUT_HINTS['name']})")


def request_timeout(value: object) -> timedelta:
    """A Kubernetes call's time limit: a hung API server must not hold a reply for minutes."""
    limit = duration(value)
    if limit > MAX_REQUEST_TIMEOUT:
        raise ValueError(f"{show(value)} is too long (expected at most 60s per API call)")
    return limit


def reconcile_wait(value: object) -> timedelta:
    wait = duration(value)
    if wait > MAX_RECONCILE_WAIT:
        raise ValueError(
            f"{show(value)} is too long (expected at most 25m: the result is posted through a "
            "Slack response_url, which expires after 30 minutes)"
        )
    return wait


namespace = matching(LABEL, "a namespace", f"{NAME}, like annia")
object_name = matching(SUBDOMAIN, "an object name", "lowercase letters, digits, '-' and '.'")
channel = matching(CHANNEL, "a channel ID", "an ID like C0123456789")
backend = matching(re.compile("sqlite|configmap"), "a backend", "sqlite or configmap")
path = matching(TEXT, "a path", "a file path", os.path.expanduser)
principal = matching(PRINCIPAL, "a user or user group", PRINCIPAL_EXPECTED)
principals = list_of(principal)


def http_url(value: object) -> str:
    """An http(s) base URL, kept without its trailing '/' (paths are added to it)."""
    if isinstance(value, str) and re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
        return value.rstrip("/")
    raise ValueError(f"{show(value)} is not an http(s) URL (expected a URL like http://host:9093)")


SEVERITIES = ("critical", "warning")  # the bot's own (bot.alerts.model.Severity)


def severities(value: object) -> tuple[str, ...]:
    """`pagerduty.severities`: one or more of the bot's severities."""
    listed = list_of(
        matching(re.compile("|".join(SEVERITIES)), "a severity", "critical or warning")
    )
    chosen = listed(value)
    if not chosen:
        raise ValueError("[] pages nothing (expected one or more of critical, warning)")
    return tuple(dict.fromkeys(chosen))
