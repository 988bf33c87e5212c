"""KAI eviction notices end to end: the simulator records Evict Events as KAI's scheduler does
(`testbed/sim/evictions.py`), the service watches them (field selector `reason=Evict`) and
tells each once, in the evicted group's namespace channel of the Slack emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from testbed.sim import evictions
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, Stack, running_stack

VISION = "C0VISION"
TEAMS = "C0TEAMS"
WAIT = 15.0
# One stack for the module's first tests, which follow one another (a told Event stays told).
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    """Notices on; vision has its own channel, every other namespace goes to "*"."""
    workdir = tmp_path_factory.mktemp("evictions")
    notices = {"evictions": True, "channels": {"vision": VISION, "*": TEAMS}}
    async with running_stack(workdir, config_overrides=_overrides(workdir, notices)) as running:
        yield running


def _overrides(workdir: Path, notices: dict[str, Any]) -> dict[str, Any]:
    return {"notices": notices, "state": {"path": str(workdir / "state.sqlite")}}


def _notices(stack: Stack, channel: str) -> list[PostedMessage]:
    return [m for m in stack.slack.messages(channel) if "evict" in str(m.metadata).lower()]


async def test_a_reclaim_is_told_once_in_its_namespace_channel_with_every_fact(
    stack: Stack,
) -> None:
    evictions.reclaim(stack.sim)
    [notice] = await stack.slack.wait_for_messages(VISION, timeout=WAIT)
    text = notice.text
    group = f"{evictions.EVICTED_NS}/{evictions.EVICTED}"
    assert f"KAI reclaimed {group} on sim" in text
    assert "Queue: vision: 4 GPUs allocated now, quota 4" in text
    assert "Pods evicted: 1" in text
    taker = f"{evictions.RECLAIMER_NS}/{evictions.RECLAIMER}"
    assert f"Taken by: {taker}, queue annia: 4 GPUs allocated now, quota 4" in text
    assert "Why: a queue below its quota or fair share took back GPUs" in text
    assert "was preempted by workload" in str(notice.blocks)  # KAI's own words close it
    assert notice.is_root and stack.slack.root_messages(TEAMS) == []


async def test_a_rise_of_the_events_count_is_a_reply_under_its_notice(stack: Stack) -> None:
    [event] = _events_of(stack, evictions.EVICTED)
    [notice] = stack.slack.root_messages(VISION)
    evictions.evicted_again(stack.sim, event, stack.sim.store.clock())
    [reply] = await stack.slack.wait_for_messages(VISION, thread_ts=notice.ts, timeout=WAIT)
    assert "Evicted again: this Event now counts 2 evictions on sim" in reply.text
    assert "Queue: vision: 4 GPUs allocated now, quota 4" in reply.text
    assert len(stack.slack.root_messages(VISION)) == 1


async def test_an_event_without_kais_annotations_says_evicted_by_kai_and_guesses_nothing(
    stack: Stack,
) -> None:
    group = _group(stack, "pg-plain-job", "annia", "annia")
    old = evictions.evict_event(group, "Pod annia/plain-0 evicted", {}, _ago(stack, hours=2))
    stack.sim.apply({**old, "metadata": {**old["metadata"], "name": "pg-plain-job.old"}})
    stack.sim.apply(evictions.evict_event(group, "Pod annia/plain-1 evicted", {}, _ago(stack)))
    [notice] = await stack.slack.wait_for_messages(TEAMS, timeout=WAIT)
    assert "annia/pg-plain-job was evicted by KAI on sim" in notice.text
    assert "Queue: annia:" in notice.text
    for guess in ("Pods evicted", "Taken by", "Why", "reclaimed", "preempted"):
        assert guess not in notice.text
    assert "plain-1" in str(notice.blocks) and "plain-0" not in str(notice.blocks)


async def test_after_a_restart_nothing_is_told_twice(stack: Stack) -> None:
    told = {m.ts for c in (VISION, TEAMS) for m in stack.slack.messages(c)}
    assert len(told) == 3, "the notices and the reply of the tests before"
    await stack.restart_service()
    group = _group(stack, "pg-after-restart", "annia", "annia")
    notes = evictions.kai_annotations("preempt", 2, "pg-urgent", "annia")
    stack.sim.apply(evictions.evict_event(group, "Pod annia/r-0 was preempted", notes, _ago(stack)))
    newest = await stack.slack.wait_for(
        lambda: [m for m in stack.slack.root_messages(TEAMS) if "pg-after-restart" in m.text],
        timeout=WAIT,
    )
    assert "KAI preempted annia/pg-after-restart" in newest[0].text
    now = {m.ts for c in (VISION, TEAMS) for m in stack.slack.messages(c)}
    assert now - told == {newest[0].ts}, "the relist after the restart told nothing again"


async def test_without_its_namespace_or_star_a_notice_goes_to_the_alert_channel(
    tmp_path: Path,
) -> None:
    notices = {"evictions": True, "channels": {"vision": VISION}}
    async with running_stack(tmp_path, config_overrides=_overrides(tmp_path, notices)) as stack:
        group = _group(stack, "pg-elsewhere", "annia", "annia")
        stack.sim.apply(evictions.evict_event(group, "Pod annia/e-0 evicted", {}, _ago(stack)))
        [notice] = await stack.slack.wait_for_messages(ALERT_CHANNEL, timeout=WAIT)
        assert "annia/pg-elsewhere was evicted by KAI" in notice.text
        assert stack.slack.messages(VISION) == []


async def test_with_notices_off_nothing_is_watched_or_told(tmp_path: Path) -> None:
    async with running_stack(tmp_path, config_overrides=_overrides(tmp_path, {})) as stack:
        evictions.reclaim(stack.sim)
        reply = await stack.command("queues")  # a round trip after the eviction
        assert "vision" in reply.text
        assert not any(r.resource == "events" for r in stack.sim.requests)
        assert stack.slack.messages(ALERT_CHANNEL) == stack.slack.messages(VISION) == []


def _group(stack: Stack, name: str, namespace: str, queue: str) -> dict[str, Any]:
    return stack.sim.apply(
        {
            "apiVersion": evictions.PODGROUP,
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": 1, "queue": queue},
        }
    )


def _events_of(stack: Stack, group: str) -> list[dict[str, Any]]:
    found = stack.sim.store.list_objects(stack.sim.store.resolve("v1", "Event"), None)["items"]
    return [e for e in found if e["involvedObject"]["name"] == group]


def _ago(stack: Stack, hours: float = 0) -> Any:
    return stack.sim.store.clock() - timedelta(hours=hours)
