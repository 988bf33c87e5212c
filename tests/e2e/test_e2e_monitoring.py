"""What the bot's own alerts read (deploy/components/monitoring/), read from its real `/metrics`
after the behaviour: Slack answering 429, Slack down while a page is owed, the Lease changing
hands, the state document against its budget. Checks and renewals are the service's own jobs,
called on a clock the test moves (tests/alert_stack.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alert_stack import HOLD, check, fire, overrides, renew, roots, take_over
from alert_stack import two_replicas as replicas
from clocks import Clock
from metrics_scrape import samples, scrape, value

from testbed.stack import CLUSTER, Stack, running_stack

pytestmark = pytest.mark.clock_from_now
OUTBOX_AGE = "kai_chatops_outbox_oldest_owed_age_seconds"
# Replicas sharing the ConfigMap state under a Lease an hour long: moving the clock past `hold`
# keeps it held.
SHARED = {"state": {"backend": "configmap"}, "lease": {"duration": "1h"}}
LEASE_SECONDS = 3600


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path, **SHARED),
        slack_backoffs=(0.0, 0.0, 0.0),
    ) as s:
        await renew(s.service)
        yield s


async def test_slack_429_answers_are_counted_on_metrics(stack: Stack, clock: Clock) -> None:
    stack.slack.fail_next("chat.postMessage", status=429, retry_after=0, times=1)
    await fire(stack, clock)

    served = samples(await scrape(stack.service.port))
    assert value(served, "kai_chatops_slack_sends_total", outcome="rate_limited") == 1
    assert len(roots(stack)) == 1


async def test_the_outbox_age_grows_while_slack_is_down_and_is_zero_once_delivered(
    stack: Stack, clock: Clock
) -> None:
    # Slack's own words for its trouble, surely not applied (an HTTP 5xx is "maybe applied",
    # looked for before each retry), for every try of the drain that follows the check.
    stack.slack.fail_next("chat.postMessage", status=200, error="fatal_error", times=4)
    await fire(stack, clock)  # the root is owed from this check on
    assert stack.slack.faults_left("chat.postMessage") == 0 and roots(stack) == []
    clock.advance(600)
    await check(stack.service)  # counts what is owed, then delivers it

    served = samples(await scrape(stack.service.port))
    assert value(served, OUTBOX_AGE, cluster=CLUSTER) == 600
    assert len(roots(stack)) == 1

    clock.advance(HOLD)
    await check(stack.service)

    served = samples(await scrape(stack.service.port))
    assert value(served, OUTBOX_AGE, cluster=CLUSTER) == 0


async def test_lease_transitions_and_the_holder_are_on_each_replicas_metrics(
    stack: Stack, clock: Clock
) -> None:
    async with replicas(stack) as (first, second):
        await take_over(stack, clock, second, LEASE_SECONDS)
        await take_over(stack, clock, first, LEASE_SECONDS)
        await renew(second)

        mine = samples(await scrape(first.port))
        theirs = samples(await scrape(second.port))
    assert value(mine, "kai_chatops_lease_transitions") == 2
    assert value(theirs, "kai_chatops_lease_transitions") == 2
    assert value(mine, "kai_chatops_lease_holder") == 1
    assert value(theirs, "kai_chatops_lease_holder") == 0


async def test_the_largest_state_document_is_shown_beside_its_budget(
    stack: Stack, clock: Clock
) -> None:
    await fire(stack, clock)

    served = samples(await scrape(stack.service.port))
    state = stack.sim.get("v1", "ConfigMap", "kai-chatops-state-sim", "kai-chatops")
    assert state is not None
    saved = len(state["data"][f"{CLUSTER}.json"])
    assert value(served, "kai_chatops_state_budget_bytes") == 800_000
    largest = value(served, "kai_chatops_state_largest_document_bytes")
    assert largest is not None and largest >= saved > 0  # the largest of every save
    assert value(served, "kai_chatops_alert_check_interval_seconds") == 3600
