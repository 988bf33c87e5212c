"""The configured slash command (docs/design.md §1.3 `slack.command`) is the one every message
names.

A stack configured with `/gpu`: the alert root and its diagnosis, the `why` advice, the help
and the errors all say `/gpu`, and nothing the bot wrote anywhere says `/kai`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alert_stack import fire, overrides
from clocks import Clock

from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

COMMAND = "/gpu"
# `/kai` as a command, not inside a path such as `kai-scheduler/kai-operator`.
DEFAULT_COMMAND = re.compile(r"(?<![\w./-])/kai(?![\w-])")
UNGROUPED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "train-0", "namespace": "annia"},
    "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "c", "image": "x"}]},
    "status": {"phase": "Pending"},
}


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[tuple[Stack, Clock]]:
    clock = Clock()
    slack = {"command": COMMAND, "alert_channel": ALERT_CHANNEL}
    async with running_stack(
        tmp_path,
        clock=clock,
        monotonic=clock.monotonic,
        config_overrides=overrides(tmp_path, slack=slack),
    ) as running:
        yield running, clock


def everything_the_bot_wrote(stack: Stack) -> str:
    """Every Web API call the bot made (posts, edits, ephemerals, views) and every response_url
    post, as JSON."""
    calls = [{"method": c.method, "params": c.params} for c in stack.slack.calls]
    hooks = [post.body for post in stack.slack.hook_posts]
    return json.dumps([calls, hooks])


def words_of(message: object) -> str:
    return json.dumps(message)


async def test_a_configured_command_is_named_by_alerts_why_help_and_errors_never_kai(
    stack: tuple[Stack, Clock],
) -> None:
    running, clock = stack
    await fire(running, clock)
    [root] = running.slack.root_messages(ALERT_CHANNEL)
    diagnosis, *_ = running.slack.thread(ALERT_CHANNEL, root.ts)
    running.sim.apply(UNGROUPED_POD)
    suspend = {"spec": {"suspend": True}}
    running.sim.patch(
        "helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system", patch=suspend
    )

    why = await running.command("why annia/train-0")
    suspended = await running.command("reconcile hr flux-system/keda", user_id=OPERATOR)
    help_ack = await running.command("help")
    unknown = await running.command("ack abcdef", user_id=OPERATOR)
    acked = await running.command(f"ack {alert_id(root)}", user_id=OPERATOR)

    root_words = words_of(root.blocks)
    assert f"`{COMMAND} ack {alert_id(root)}`" in root_words
    assert f"`{COMMAND} silence {alert_id(root)} 2h REASON`" in root_words
    assert f"`{COMMAND} health` shows when the operator agrees" in root_words
    assert f"`{COMMAND} diagnose kai` looks again" in words_of(diagnosis.blocks)
    assert f"(`{COMMAND} diagnose kai`)" in why.text
    assert f"{COMMAND} health" in help_ack.text
    assert f"`{COMMAND} alerts` lists them" in unknown.text
    assert acked.text.startswith("Acknowledged alert")
    assert f"To resume it: `{COMMAND} resume hr flux-system/keda`" in suspended.text
    assert DEFAULT_COMMAND.findall(everything_the_bot_wrote(running)) == []


def alert_id(root: PostedMessage) -> str:
    """The alert ID the root's status line shows (`Alert `3f9a2c` · …`)."""
    return words_of(root.blocks).split("Alert `", 1)[1].split("`", 1)[0]
