"""Alertmanager's webhook as Alertmanager posts it, for the tests that post it themselves: the
version-4 payload (notify/webhook/webhook.go `Message` around template/template.go `Data`) and
the POST with its bearer token."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import aiohttp

from bot.service.server import Service
from testbed.stack import ALERTMANAGER_TOKEN

STARTS = "2026-12-06T10:00:00.123456789Z"  # Alertmanager writes nanoseconds
GROUP = '{}/{severity="critical"}:{alertname="KaiSchedulerDown"}'


def alert(
    name: str = "KaiSchedulerDown",
    *,
    status: str = "firing",
    starts: str = STARTS,
    summary: str = "",
    **labels: str,
) -> dict[str, Any]:
    """One alert as the payload carries it; its fingerprint a hash of its labels, as
    Alertmanager's is."""
    every = {"alertname": name, "severity": "critical", **labels}
    fingerprint = hashlib.sha256(json.dumps(every, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "status": status,
        "labels": every,
        "annotations": {"summary": summary or f"{name} on {labels.get('pod', 'the cluster')}"},
        "startsAt": starts,
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-12-06T11:00:00Z",
        "generatorURL": "http://prometheus:9090/graph",
        "fingerprint": fingerprint,
    }


def payload(*alerts: dict[str, Any], group_key: str = GROUP, **common: str) -> dict[str, Any]:
    """A notification of `alerts`: resolved when none fires; the common labels are those every
    alert shares (plus `common`)."""
    shared = dict(alerts[0]["labels"]) if alerts else {}
    for each in alerts[1:]:
        shared = {k: v for k, v in shared.items() if each["labels"].get(k) == v}
    firing = any(a["status"] == "firing" for a in alerts)
    return {
        "receiver": "kai-chatops",
        "status": "firing" if firing else "resolved",
        "alerts": list(alerts),
        "groupLabels": {"alertname": shared.get("alertname", ""), "severity": "critical"},
        "commonLabels": {**shared, **common},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
    }


async def post(
    service: Service,
    body: dict[str, Any] | bytes,
    *,
    token: str | None = ALERTMANAGER_TOKEN,
    headers: dict[str, str] | None = None,
    delivered: bool = True,
) -> tuple[int, str]:
    """POST `body` to the service's /alertmanager as Alertmanager does; (status, text), once
    what it owes is `delivered` (the service answers when it is saved, and sends it apart)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    url = f"http://127.0.0.1:{service.port}/alertmanager"
    async with aiohttp.ClientSession() as session, session.post(url, data=data, headers=sent) as r:
        answer = r.status, await r.text()
    if delivered:
        await service.deps.alerts.deliveries_done()
    return answer
