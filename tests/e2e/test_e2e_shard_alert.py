"""A SchedulingShard page, end to end: a shard the KAI operator leaves unreconciled pages, the page
goes to the alert channel, and the first reply in its thread is the KAI diagnosis: why it fired,
then the KAI operator and what is not available (docs/design.md §2 "Alerts": kai-config or a
shard → the KAI operator and the Deployments its message names).
"""

from __future__ import annotations

from pathlib import Path

from alert_stack import HOLD, alert_stack, check, roots
from clocks import Clock

from testbed.sim import Simulator
from testbed.stack import ALERT_CHANNEL

PAST_TIMEOUT = 11 * 60  # kai.progressing_timeout is 10 minutes by default


def shard_changed(sim: Simulator) -> None:
    """A spec change the KAI operator never reconciles: the shard's conditions stay behind."""
    sim.patch(
        "kai.scheduler/v1", "SchedulingShard", "default", patch={"spec": {"goMemLimitRatio": 0.8}}
    )


async def test_the_first_reply_under_a_shard_page_is_the_kai_diagnosis(tmp_path: Path) -> None:
    clock = Clock()
    async with alert_stack(tmp_path, clock) as (stack, _):
        shard_changed(stack.sim)
        clock.advance(PAST_TIMEOUT)
        await check(stack.service)
        clock.advance(HOLD)
        await check(stack.service)

        [root] = roots(stack)
        [diagnosis, *_] = stack.slack.thread(ALERT_CHANNEL, root.ts)
        assert root.text.startswith("[WARNING] sim: SchedulingShard default Progressing")
        assert diagnosis.text.startswith("Diagnosis of kai on sim: Progressing")
        assert "Why it fired: SchedulingShard default stays Progressing" in diagnosis.text
        assert "Deployment kai-scheduler/kai-operator: Healthy" in diagnosis.text
        assert diagnosis.metadata["event_payload"]["note"] == "diagnosis"
