"""Changes followed by a watch of the one object, and the polls that stand in when it cannot be
made or breaks (issue 15): Flux reconcile, Argo CD refresh and sync, KEDA pause."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from waiting import wait_until, watches_ended

from bot.slack import blocks as render
from testbed.sim.faults import RecordedRequest
from testbed.stack import DEMO_CHANNEL, OPERATOR, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"
BEHAVIOUR = "sim.kai-chatops/reconcile"
RECONCILE = "reconcile hr flux-system/kai-scheduler"


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, keda_controller=True) as running:
        yield running


def slow_reconcile(stack: Stack, behaviour: str = "slow:300ms") -> None:
    annotations = {BEHAVIOUR: behaviour}
    stack.sim.patch(
        HR_API, "HelmRelease", "kai-scheduler", "flux-system",
        patch={"metadata": {"annotations": annotations}},
    )  # fmt: skip
    stack.sim.clear_requests()


def calls(stack: Stack, resource: str) -> list[RecordedRequest]:
    return [r for r in stack.sim.requests if r.resource == resource]


async def reconcile(stack: Stack) -> str:
    reply = await stack.command(RECONCILE, to_the_end=True)
    await watches_ended(stack.sim)
    return reply.text.splitlines()[0]


async def test_a_reconcile_is_followed_by_one_watch_of_the_object_not_by_polls(
    stack: Stack,
) -> None:
    slow_reconcile(stack)
    result = await reconcile(stack)
    made = [(r.verb, r.status) for r in calls(stack, "helmreleases")]
    watch = next(r for r in calls(stack, "helmreleases") if r.verb == "watch")
    assert result.endswith(": reconciled")
    assert made == [("get", 200), ("patch", 200), ("watch", 200)]
    assert watch.query["fieldSelector"] == "metadata.name=kai-scheduler"
    assert watch.query["resourceVersion"]


@pytest.mark.parametrize(
    "status", [403, 410, 503], ids=["watch-forbidden", "watch-expired", "watch-failing"]
)
async def test_a_reconcile_whose_watch_is_refused_is_polled_to_the_same_result(
    stack: Stack, status: int
) -> None:
    slow_reconcile(stack)
    stack.sim.faults.add(status, verb="watch")
    result = await reconcile(stack)
    made = [(r.verb, r.status) for r in calls(stack, "helmreleases")]
    assert result.endswith(": reconciled")
    assert made[:3] == [("get", 200), ("patch", 200), ("watch", status)]
    assert made[3:] and set(made[3:]) == {("get", 200)}


async def test_a_watch_that_ends_early_is_followed_by_polls_to_the_result(stack: Stack) -> None:
    slow_reconcile(stack, "slow:1s")
    reply = await stack.command(RECONCILE)
    await wait_until(lambda: stack.sim.open_watches, 5, "the reconcile's watch open")
    stack.sim.end_watches()  # the API server restarts, say
    final = await stack.slack.wait_for_response(reply.delivery.hook_id, count=2, timeout=10)
    await watches_ended(stack.sim)
    made = [r.verb for r in calls(stack, "helmreleases")]
    assert str(final.body["text"]).splitlines()[0].endswith(": reconciled")
    assert made[:3] == ["get", "patch", "watch"] and set(made[3:]) == {"get"}


async def test_an_argo_refresh_and_a_sync_are_followed_by_watch(stack: Stack) -> None:
    refreshed = await stack.command("reconcile app argocd/kai-scheduler --hard", to_the_end=True)
    ask = await stack.command("sync argocd/kai-scheduler")
    assert ask.message is not None
    synced = await stack.click("Confirm", ask.message)
    await watches_ended(stack.sim)
    made = [r.verb for r in calls(stack, "applications")]
    assert refreshed.text.splitlines()[0].endswith(": done")
    assert "sync" in synced.text.lower()
    # One read before the refresh, two before the sync (its confirmation reads too), none after
    # either change: a watch (logged when its stream ends) followed each.
    assert sorted(made) == ["get", "get", "get", "patch", "patch", "watch", "watch"]


async def pause_confirmed(stack: Stack, watch_status: int | None = None) -> str:
    """Ask to pause, clear the requests, then Confirm (with the watch answered `watch_status`,
    when given); the reply's text."""
    ask = await stack.command("pause annia/annia-worker for 1h")
    assert ask.message is not None
    stack.sim.clear_requests()
    if watch_status is not None:
        stack.sim.faults.add(watch_status, verb="watch")
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=ask.message
    )
    result = await stack.slack.wait_for_response(delivery.hook_id, timeout=10)
    await watches_ended(stack.sim)
    return str(result.body["text"])


async def test_a_keda_pause_is_confirmed_by_watching_for_kedas_paused_condition(
    stack: Stack,
) -> None:
    text = await pause_confirmed(stack)
    made = [(r.verb, r.status) for r in calls(stack, "scaledjobs")]
    assert "paused" in text.lower()
    assert made == [("get", 200), ("patch", 200), ("watch", 200)]


async def test_a_keda_pause_whose_watch_is_refused_is_polled_to_the_same_result(
    stack: Stack,
) -> None:
    text = await pause_confirmed(stack, watch_status=403)
    made = [(r.verb, r.status) for r in calls(stack, "scaledjobs")]
    assert "paused" in text.lower()
    assert made[:3] == [("get", 200), ("patch", 200), ("watch", 403)]
    assert made[3:] and set(made[3:]) == {("get", 200)}
