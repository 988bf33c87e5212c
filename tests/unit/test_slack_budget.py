"""Slack's budget (bot/slack/budget.py): a lane serves the most urgent caller first, refuses a
caller whose deadline came unsent, and a 429 closes it for everyone until Retry-After."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.metrics import Metrics
from bot.slack import budget, tiers
from bot.slack.budget import Budget, Lane, NotSent, Priority, Urgency
from bot.slack.client import BudgetedClient


def _lane(per_minute: float = 1200.0, burst: int = 1) -> Lane:
    return Lane(per_minute, burst=burst, monotonic=asyncio.get_running_loop().time)


async def test_waiting_calls_are_served_most_urgent_first_whatever_order_they_came_in() -> None:
    lane = _lane()
    await lane.take(Urgency())  # the one token of the burst: everyone after this waits
    served: list[Priority] = []

    async def call(priority: Priority) -> None:
        await lane.take(Urgency(priority))
        served.append(priority)

    order = [
        Priority.BACKGROUND, Priority.CONVERGE, Priority.ANSWER, Priority.THREAD, Priority.PAGE
    ]  # fmt: skip
    await asyncio.gather(*(call(p) for p in order))
    assert served == [
        Priority.PAGE, Priority.THREAD, Priority.ANSWER, Priority.CONVERGE, Priority.BACKGROUND
    ]  # fmt: skip
    assert lane.waited == 5


async def test_a_call_whose_deadline_comes_first_is_not_sent_and_the_next_is_still_served() -> None:
    lane = _lane(per_minute=60.0)  # one token a second
    await lane.take(Urgency())
    loop = asyncio.get_running_loop()
    with pytest.raises(NotSent):
        await lane.take(Urgency(Priority.PAGE, sent_by=loop.time() + 0.01))
    await asyncio.wait_for(lane.take(Urgency(Priority.BACKGROUND)), 5)


async def test_a_429_closes_the_lane_for_every_caller_until_retry_after_has_passed() -> None:
    lane = _lane(burst=5)
    loop = asyncio.get_running_loop()
    lane.close_for(0.2)
    reopens = loop.time() + 0.2
    await lane.take(Urgency(Priority.PAGE))
    assert loop.time() >= reopens
    assert lane.waited == 1


async def test_a_lane_without_waiters_spends_its_burst_at_once() -> None:
    lane = _lane(per_minute=6.0, burst=3)
    for _ in range(3):
        await lane.take(Urgency())
    assert lane.waited == 0


def test_lanes_spend_a_little_under_slacks_allowance_with_bursts_of_a_tenth() -> None:
    budget = Budget(monotonic=lambda: 0.0)
    history = budget.lane("conversations.history")
    assert history is not None
    assert history.rate * 60 == pytest.approx(50 * 0.9)
    assert history.burst == 5
    assert budget.lane("conversations.history") is history  # one lane per method
    post_a, post_b = budget.lane(tiers.POST_METHOD, "C1"), budget.lane(tiers.POST_METHOD, "C2")
    assert post_a is not None and post_a is not post_b  # posts: one lane per channel
    assert post_a.rate * 60 == pytest.approx(60 * 0.9)
    assert budget.lane("auth.test") is None


async def test_among_equally_urgent_calls_the_one_with_most_time_left_is_served_first() -> None:
    """Under a backlog the calls that came first are those nearest their deadline: served
    first, one sent just before it had a second for Slack to answer before the right to act
    ended, and half the roots of a thousand clusters failing at once were cut there, their
    outcome unknown (bench/fleet_ha.py). The one with the most time left goes first; one
    whose deadline comes while it waits is refused unsent, surely not applied."""
    lane = _lane(per_minute=600.0)  # a token every 0.1 s
    await lane.take(Urgency())
    loop = asyncio.get_running_loop()
    served: list[str] = []

    async def call(name: str, left: float | None) -> None:
        try:
            await lane.take(
                Urgency(Priority.PAGE, sent_by=None if left is None else loop.time() + left)
            )
            served.append(name)
        except NotSent:
            served.append(f"{name} not sent")

    await asyncio.gather(
        call("near", 0.15), call("far", 5.0), call("farther", 9.0), call("none", None)
    )
    assert served == ["none", "near not sent", "farther", "far"]


class _SlowSlack(AsyncWebClient):
    """Slack itself, answering after a long while (what the budgeted client hands calls to)."""

    async def api_call(self, api_method: str, **kwargs: Any) -> Any:
        await asyncio.sleep(10)


class _Client(BudgetedClient, _SlowSlack):
    pass


async def test_a_call_given_up_while_it_waits_for_its_budget_is_known_unsent() -> None:
    """A stalled event loop fires a caller's time limit together with the lane's deadline: a
    post cut while it still waited for its budget was recorded "unknown" and looked for in the
    channel before it was sent again (bench/fleet_ha.py). The caller knows it never went; one
    cut after its lane let it go may have reached Slack."""
    loop = asyncio.get_running_loop()
    client = _Client(budget=Budget(monotonic=loop.time), metrics=Metrics(), token="xoxb-test")
    lane = client.budget.lane("chat.postMessage", "C1")
    assert lane is not None
    lane.close_for(60)  # no budget for a minute
    with budget.leaving() as waiting, pytest.raises(TimeoutError):
        await asyncio.wait_for(client.api_call("chat.postMessage", json={"channel": "C1"}), 0.05)
    assert waiting.unsent

    other = client.budget.lane("chat.postMessage", "C2")
    assert other is not None
    with budget.leaving() as went, pytest.raises(TimeoutError):
        await asyncio.wait_for(client.api_call("chat.postMessage", json={"channel": "C2"}), 0.05)
    assert went.asked and went.sent and not went.unsent
