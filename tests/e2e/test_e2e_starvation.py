"""The queue starvation alert end to end (docs/design.md §2 "Queue starvation"): the simulator's
`starve` (queue vision below its GPU quota, a gang pending 45 minutes, annia over its quota),
the check, one warning root naming the group and who holds the GPUs, the queue's evidence as the
first reply, `/kai queues` and the Home tab marking the queues, one list each of Queues and
PodGroups per check, and the resolution once the gang runs. With `alerts.starved_after` 0
nothing is read and nothing is posted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alert_stack import (
    HOLD,
    alert_stack,
    assert_one_clean_incident,
    check,
    evidence_and_rest,
    roots,
    words,
)
from clocks import Clock

from testbed.sim import breakage
from testbed.sim.workload_breakage import STARVED_GROUP, schedule_starved
from testbed.stack import ALERT_CHANNEL, VIEWER, Stack

# The scheduler stall rule (`alerts.stall_after`, on by default) lists PodGroups of its own:
# off here, so the reads counted are the starvation rule's.
STARVING = {
    "hold": f"{HOLD}s",
    "interval": "1h",
    "repeat": "4h",
    "starved_after": "30m",
    "stall_after": "0",
}


def home_lines(view: dict[str, Any]) -> list[str]:
    return [
        line
        for block in view["blocks"]
        for line in str((block.get("text") or {}).get("text", "")).splitlines()
    ]


def queue_reads(stack: Stack) -> list[tuple[str, str]]:
    return [
        (r.resource, r.verb) for r in stack.sim.requests if r.resource in ("queues", "podgroups")
    ]


async def test_a_starved_queue_pages_once_with_its_evidence_is_marked_and_resolves_when_it_runs(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts=STARVING) as (stack, _):
        breakage.ACTIONS["starve"](stack.sim)
        clock.advance((stack.sim.store.clock() - clock.now).total_seconds())  # the sim's now
        await check(stack.service)  # no `hold`: the 45 minutes waited were the hold

        [root] = roots(stack)
        assert root.text.startswith(
            f"[WARNING] sim: Queue vision Starved: queue vision starved: annia/{STARVED_GROUP} "
            "waiting 45m"
        )
        assert "Allocated over quota (who holds the GPUs): annia 8 of 4 GPUs." in words(root)
        evidence, after = evidence_and_rest(stack, root)
        assert after == []
        shown = words(evidence)
        assert evidence.text.startswith("Diagnosis of queue vision on sim: starved")
        assert "Healthy" not in shown
        assert (
            "Queue: vision (Vision team): GPU quota 4, limit unlimited, over-quota weight 2, "
            "allocated 2, requested 6 [starved]"
        ) in shown
        assert "Over quota: annia (Annia workers): GPU quota 4, limit 8" in shown
        assert f"annia/{STARVED_GROUP} · queue vision · pool default · waiting 45m" in shown
        assert "PodSchedulingErrors: Resources were found for 0 pods while 2 are required" in shown

        queues = await stack.command("queues", user_id=VIEWER)
        lines = queues.text.splitlines()
        assert any(
            x.startswith("    ↳ vision (Vision team): ") and x.endswith(" [starved]") for x in lines
        )
        assert any(
            x.startswith("    ↳ annia (Annia workers): ") and x.endswith(" [over quota]")
            for x in lines
        )
        assert any(
            x.startswith("[starved]: below its GPU quota with a PodGroup pending 30m")
            for x in lines
        )

        assert (await stack.driver.open_home(user_id=VIEWER)).status == 200
        home = home_lines(await stack.slack.wait_for_home(VIEWER, count=1))
        assert (
            "      :hourglass_flowing_sand: queue vision *starved*: 2 of 4 GPUs (quota) allocated, "
            f"annia/{STARVED_GROUP} for 45m waiting"
        ) in home
        assert (
            "      :arrow_double_up: queue annia *over quota*: 8 of 4 GPUs (quota) allocated"
        ) in home

        stack.sim.clear_requests()
        await check(stack.service)
        assert sorted(queue_reads(stack)) == [("podgroups", "list"), ("queues", "list")]

        schedule_starved(stack.sim)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        replies = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert [r.text[:30] for r in replies] == [
            "Diagnosis of queue vision on s",
            "What changed on sim in the hou",
            ":white_check_mark: Resolved at",
        ]
        assert stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED (warning)]")
        assert_one_clean_incident(stack)


async def test_with_starved_after_off_a_starved_queue_reads_and_posts_nothing(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock, alerts={**STARVING, "starved_after": "0"}) as (
        stack,
        _,
    ):
        breakage.ACTIONS["starve"](stack.sim)
        stack.sim.clear_requests()
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        assert roots(stack) == [] and queue_reads(stack) == []
        queues = await stack.command("queues", user_id=VIEWER)
        assert "[starved]" not in queues.text and " [over quota]" in queues.text
