"""The PagerDuty stand-in answers as PagerDuty's published Events API v2 does
(PagerDuty/developer-docs/docs/events-API-v2/02-Trigger-Events.md and 01-Overview.md beside it):
202 with `dedup_key`, 400 with `errors`, 429 above the rate limit, de-duplication by key."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from testbed.pagerduty import PagerDutyStandIn, running_standin

KEY = "R0123456789abcdef0123456789abcde"
TRIGGER = {
    "routing_key": KEY,
    "event_action": "trigger",
    "dedup_key": "prod/3f9a2c/1",
    "payload": {"summary": "KAI down", "source": "prod", "severity": "critical"},
}


async def post(standin: PagerDutyStandIn, event: object) -> tuple[int, dict[str, Any]]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{standin.url}/v2/enqueue", json=event) as response,
    ):
        body = await response.json(content_type=None) if response.status != 429 else {}
        return response.status, body


async def test_an_event_is_taken_with_202_and_its_dedup_key() -> None:
    async with running_standin() as standin:
        status, body = await post(standin, TRIGGER)
    assert (status, body) == (
        202,
        {"status": "success", "message": "Event processed", "dedup_key": "prod/3f9a2c/1"},
    )


@pytest.mark.parametrize(
    ("event", "error"),
    [
        ({**TRIGGER, "routing_key": "short"}, "Length of 'routing_key' is incorrect"),
        ({**TRIGGER, "event_action": "page"}, "'event_action' is invalid"),
        ({**TRIGGER, "payload": {"source": "prod", "severity": "critical"}}, "payload.summary"),
        ({**TRIGGER, "dedup_key": "x" * 256}, "'dedup_key' is invalid"),
        ({"routing_key": KEY, "event_action": "resolve"}, "'dedup_key' is required"),
    ],
    ids=["short key", "unknown action", "no summary", "dedup_key too long", "resolve no key"],
)
async def test_an_invalid_event_gets_400_with_its_errors_and_is_not_ingested(
    event: dict[str, Any], error: str
) -> None:
    async with running_standin() as standin:
        status, body = await post(standin, event)
    assert status == 400 and body["status"] == "invalid event"
    assert any(error in e for e in body["errors"]), body["errors"]
    assert standin.alerts == [] and standin.ingested() == []


async def test_events_above_the_rate_limit_get_429_and_are_not_ingested() -> None:
    async with running_standin(rate_limit=2) as standin:
        answers = [(await post(standin, TRIGGER))[0] for _ in range(3)]
    assert answers == [202, 202, 429]
    assert len(standin.ingested()) == 2


async def test_events_of_one_dedup_key_apply_to_its_open_alert_as_pagerduty_documents() -> None:
    async with running_standin() as standin:
        for action in ("trigger", "trigger", "acknowledge", "resolve", "resolve"):
            await post(standin, {**TRIGGER, "event_action": action})
        await post(standin, TRIGGER)  # after the resolution: a new alert

    first, second = standin.alerts_of("prod/3f9a2c/1")
    assert first.statuses == ["triggered", "acknowledged", "resolved"]
    assert first.log == ["trigger", "trigger", "acknowledge", "resolve"]  # the 2nd resolve: dropped
    assert second.statuses == ["triggered"]
