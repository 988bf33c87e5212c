"""Alertmanager's webhook payload read into a `Notification`, or refused with one clear line.

The payload is what Alertmanager's webhook notifier posts: `Message` in
notify/webhook/webhook.go (`version` "4", `groupKey`, `truncatedAlerts`) around the template's
`Data` and `Alert` in template/template.go (`receiver`, `status`, `alerts`, `groupLabels`,
`commonLabels`, `commonAnnotations`, `externalURL`; each alert's `status`, `labels`,
`annotations`, `startsAt`, `endsAt`, `generatorURL`, `fingerprint`), github.com/prometheus/
alertmanager v0.35.0. Pure: no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core.conditions import parse_timestamp

VERSION = "4"  # notify/webhook/webhook.go: `Version: "4"`
FIRING, RESOLVED = "firing", "resolved"  # template/template.go: model.AlertFiring / Resolved


class BadPayload(ValueError):
    """Not a webhook payload we can read (the line says why); `unsupported` for another
    version of it."""


@dataclass(frozen=True)
class Alert:
    """One alert of the group, as the payload carries it."""

    status: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: datetime
    fingerprint: str

    @property
    def token(self) -> str:
        """This firing of this alert: an alert that resolves and fires again is another."""
        return f"{self.fingerprint}@{self.starts_at.isoformat()}"

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "") or self.fingerprint


@dataclass(frozen=True)
class Notification:
    """One webhook notification of one notification group (`group_key`)."""

    group_key: str
    status: str
    alerts: tuple[Alert, ...]
    group_labels: Mapping[str, str]
    common_labels: Mapping[str, str]
    common_annotations: Mapping[str, str]
    truncated: int = 0

    @property
    def firing(self) -> tuple[Alert, ...]:
        return tuple(a for a in self.alerts if a.status == FIRING)


def parse_notification(body: bytes) -> Notification:
    """The notification `body` holds.

    Raises:
        BadPayload: not JSON, not a version-4 payload, or a field of the wrong shape.
    """
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError) as e:
        raise BadPayload(f"the body is not JSON: {e}") from None
    if not isinstance(raw, dict):
        raise BadPayload("the body is not a JSON object")
    if raw.get("version") != VERSION:
        version = json.dumps(raw.get("version"))[:40]
        raise BadPayload(f'payload version {version} is not supported (expected "{VERSION}")')
    status = _status(raw, "status")
    group_key = _text(raw, "groupKey", "groupKey")
    alerts = raw.get("alerts")
    if not isinstance(alerts, list):
        raise BadPayload("alerts is not a list")
    truncated = raw.get("truncatedAlerts") or 0
    return Notification(
        group_key=group_key,
        status=status,
        alerts=tuple(_alert(a, i) for i, a in enumerate(alerts)),
        group_labels=_labels(raw.get("groupLabels"), "groupLabels"),
        common_labels=_labels(raw.get("commonLabels"), "commonLabels"),
        common_annotations=_labels(raw.get("commonAnnotations"), "commonAnnotations"),
        truncated=truncated if isinstance(truncated, int) else 0,
    )


def _alert(raw: Any, index: int) -> Alert:
    where = f"alerts[{index}]"
    if not isinstance(raw, dict):
        raise BadPayload(f"{where} is not an object")
    status = _status(raw, f"{where}.status")
    fingerprint = _text(raw, "fingerprint", f"{where}.fingerprint")
    try:
        starts_at = parse_timestamp(raw.get("startsAt"))
    except (ValueError, TypeError):
        starts_at = None
    if starts_at is None:
        raise BadPayload(f"{where}.startsAt is not a time")
    return Alert(
        status=status,
        labels=_labels(raw.get("labels"), f"{where}.labels"),
        annotations=_labels(raw.get("annotations"), f"{where}.annotations"),
        starts_at=starts_at,
        fingerprint=fingerprint,
    )


def _status(raw: dict[str, Any], where: str) -> str:
    status = raw.get("status")
    if status not in (FIRING, RESOLVED):
        shown = json.dumps(status)[:40]
        raise BadPayload(f'{where} must be "firing" or "resolved", not {shown}')
    return str(status)


def _text(raw: dict[str, Any], name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value:
        raise BadPayload(f"{where} is missing")
    return value


def _labels(raw: Any, where: str) -> dict[str, str]:
    """A KV of template/template.go: string names to string values (absent: empty)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise BadPayload(f"{where} is not a map of strings")
    return {str(k): v for k, v in raw.items()}
