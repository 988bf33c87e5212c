"""KAI's scheduler v0.12.0 at work (the upstream tier): what it writes read back by the bot.

Jobs and pods ask for GPUs of a kwok node (4 GPUs) in queues `annia` and `vision` (quota 2 each
under `research`, upstream/kai.py `workload_queues`); KAI's podgrouper makes their PodGroups,
its scheduler decides, its binder binds, its queue and podgroup controllers write the Queues' and
PodGroups' status. Eviction notices follow a real reclaim; a queue below its quota whose pod
cannot be placed is starved (`/kai queues`, `pending`, `why`, the starvation page) in the words
the scheduler wrote. Each test deletes what it made and waits for its pods to go.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from alert_stack import check, roots, words
from clocks import Clock
from upstream import workloads
from upstream.cluster import Upstream
from upstream.service import serving

from testbed.stack import CLUSTER, VIEWER, ServiceStack

pytestmark = pytest.mark.clock_from_now
TEAMS = "C0TEAMS"
NAMESPACE = "annia"
STARVED_AFTER = timedelta(minutes=30)


@pytest.fixture
async def stack(upstream: Upstream, tmp_path: Path, clock: Clock) -> AsyncIterator[ServiceStack]:
    """Eviction notices on (every namespace to TEAMS), starvation after 30 minutes."""
    notices = {"evictions": True, "channels": {"*": TEAMS}}
    after = {"starved_after": f"{int(STARVED_AFTER.total_seconds() // 60)}m"}
    async with serving(upstream, tmp_path, clock, notices=notices, alerts=after) as served:
        yield served


async def test_a_real_reclaim_by_kais_scheduler_is_told_once_per_evicted_group(
    stack: ServiceStack, upstream: Upstream, made: workloads.Workloads
) -> None:
    holders = [made.job(f"hold-{i}", "annia", gpus=1) for i in range(4)]
    made.wait_running(holders)  # annia runs 4 GPUs, 2 over its quota
    taker = made.job("take-0", "vision", gpus=2)
    made.wait_running([taker])  # vision got its quota back
    events = workloads.evict_events(upstream.plane, NAMESPACE)
    assert len(events) == 2, events  # one pod of each of two of annia's Jobs

    notices = await stack.slack.wait_for(
        lambda: got if len(got := stack.slack.root_messages(TEAMS)) >= len(events) else None,
        timeout=30,
    )
    assert len(notices) == len(events)
    for event in events:
        group = event["involvedObject"]["name"]
        [notice] = [n for n in notices if f"/{group} " in n.text]
        assert notice.text.startswith(f"KAI reclaimed {NAMESPACE}/{group} on {CLUSTER}")
        assert "Queue: annia: " in notice.text, notice.text
        notes = event["metadata"]["annotations"]
        assert f"Pods evicted: {notes['num-evicted-pods']}" in notice.text
        taken_by = f"{notes['evictor-pod-group-namespace']}/{notes['evictor-pod-group-name']}"
        assert f"Taken by: {taken_by}, queue vision: 2 GPUs allocated now, quota 2" in notice.text
        assert event["message"].splitlines()[0] in str(notice.blocks)  # KAI's own words


@pytest.fixture(scope="module")
def starved(upstream: Upstream) -> Iterator[tuple[list[str], str]]:
    """annia holds the node's 4 GPUs (2 over its quota); vision (below its quota) asks for 3 on
    one pod, which no reclaim can give it within its fair share: it waits, with the
    scheduler's reasons on its PodGroup. The holders' names and the waiter's."""
    ours = workloads.Workloads(upstream.plane, NAMESPACE)
    try:
        holders = [ours.pod(f"run-{i}", "annia", gpus=1) for i in range(4)]
        ours.wait_running(holders)
        waiter = ours.pod("wait-0", "vision", gpus=3)
        workloads.wait_scheduling_condition(upstream.plane, NAMESPACE, waiter)
        yield holders, waiter
    finally:
        ours.delete_all()


async def test_queues_show_what_kais_queue_controller_counted(
    stack: ServiceStack, starved: tuple[list[str], str]
) -> None:
    reply = await stack.command("queues", user_id=VIEWER)
    lines = reply.text.splitlines()
    assert lines[0] == f"KAI queues on {CLUSTER}"
    annia = next(x for x in lines if "↳ annia" in x)
    assert "GPU quota 2, limit unlimited" in annia and "allocated 4" in annia, reply.text
    assert "[over quota]" in annia
    vision = next(x for x in lines if "↳ vision" in x)
    # KAI's queue-controller leaves `allocated` out when nothing is: read as 0, not unknown.
    assert "allocated 0, requested 3" in vision, reply.text


async def test_pending_and_why_give_the_schedulers_own_reasons(
    stack: ServiceStack, upstream: Upstream, starved: tuple[list[str], str]
) -> None:
    _, waiter = starved
    group = workloads.group_of(upstream.plane, NAMESPACE, waiter)
    written = workloads.scheduling_reasons(group)
    pending = await stack.command("pending")
    assert f"{NAMESPACE}/{group['metadata']['name']} · queue vision" in pending.text, pending.text
    for reason in written:
        assert reason["message"].splitlines()[0] in pending.text

    why = await stack.command(f"why {NAMESPACE}/{waiter}")
    assert why.text.startswith(f"Why {NAMESPACE}/{waiter} is Pending"), why.text
    assert group["metadata"]["name"] in why.text
    assert "Queue: vision: " in why.text
    assert written[0]["message"].splitlines()[0] in why.text


async def test_a_queue_below_its_quota_waiting_past_starved_after_is_paged(
    stack: ServiceStack, upstream: Upstream, clock: Clock, starved: tuple[list[str], str]
) -> None:
    _, waiter = starved
    group = workloads.group_of(upstream.plane, NAMESPACE, waiter)["metadata"]["name"]
    await check(stack.service)
    assert not [r for r in roots(stack) if "Starved" in r.text]  # not waiting long enough yet
    clock.advance(STARVED_AFTER.total_seconds() + 60)
    await check(stack.service)
    [root] = [r for r in roots(stack) if "Starved" in r.text]
    assert root.text.startswith(
        f"[WARNING] {CLUSTER}: Queue vision Starved: queue vision starved: {NAMESPACE}/{group}"
    ), root.text
    assert "annia 4 of 2 GPUs" in words(root)
    reply = await stack.command("queues", user_id=VIEWER)
    vision = next(x for x in reply.text.splitlines() if "↳ vision" in x)
    assert vision.endswith("[starved]"), reply.text
