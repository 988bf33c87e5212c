"""The ack leaves before the work: commands and clicks, HTTP mode and Socket Mode (issue 15).

The Bolt app answers as soon as a listener returns (`process_before_response`), so every listener
must hand its slow part to `deps.inflight.spawn`: these tests hold the cluster's answers back and
check that Slack has its ack while the reply is still being worked out, that the reply follows,
and that a failure after the ack still ends in a message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest

from bot.slack import blocks as render
from testbed.stack import DEMO_CHANNEL, OPERATOR, Stack, running_stack

HELD = 0.5  # seconds the simulator holds back the answers the work needs


@pytest.fixture(params=[False, True], ids=["http", "socket-mode"])
async def stack(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, socket_mode=request.param, keda_controller=True) as running:
        yield running


async def test_a_command_is_acked_while_its_cluster_reads_are_still_under_way(
    stack: Stack,
) -> None:
    stack.sim.faults.add(None, resource="configs", delay=HELD)
    delivery = await stack.driver.send_command("health", user_id=OPERATOR)
    replied_before_ack = stack.slack.responses(delivery.hook_id)
    reply = await stack.slack.wait_for_response(delivery.hook_id, timeout=10)
    assert delivery.acked and delivery.ack_text == ""
    assert replied_before_ack == []
    assert str(reply.body["text"]).startswith("KAI health on sim")


async def test_a_confirm_click_is_acked_while_the_change_is_still_under_way(
    stack: Stack,
) -> None:
    ask = await stack.command("pause annia/annia-worker")
    assert ask.message is not None
    stack.sim.faults.add(None, resource="scaledjobs", delay=HELD)
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=ask.message
    )
    replied_before_ack = stack.slack.responses(delivery.hook_id)
    result = await stack.slack.wait_for_response(delivery.hook_id, timeout=10)
    assert delivery.acked
    assert replied_before_ack == []
    assert "annia/annia-worker" in str(result.body["text"])


async def test_bad_input_is_still_answered_in_the_ack_itself(stack: Stack) -> None:
    reply = await stack.command("pause")
    assert reply.message is None
    assert reply.delivery.ack_text.startswith("pause needs NAMESPACE/NAME")
    assert "/kai pause NAMESPACE/NAME [for DURATION]" in reply.delivery.ack_text


async def test_a_failure_after_the_ack_ends_in_a_short_message_in_both_modes(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def broken_clock() -> datetime:
        raise RuntimeError("simulated bug")

    for socket_mode in (False, True):
        workdir = tmp_path / ("socket" if socket_mode else "http")
        workdir.mkdir()
        async with running_stack(workdir, clock=broken_clock, socket_mode=socket_mode) as stack:
            reply = await stack.command("health")
        assert reply.delivery.acked
        assert "Something went wrong inside kai-chatops" in reply.text
        assert "simulated bug" not in reply.text


async def test_a_shutdown_waits_for_a_click_whose_work_is_in_flight(tmp_path: Path) -> None:
    async with running_stack(tmp_path, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker")
        assert ask.message is not None
        stack.sim.faults.add(None, resource="scaledjobs", delay=HELD)
        delivery = await stack.driver.click_button(
            render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=ask.message
        )
        in_flight = stack.service.deps.inflight.count
        await stack.service.stop()
        posted = stack.slack.responses(delivery.hook_id)
        stack.service = stack.make_service()  # the stack stops its service on the way out
        await stack.service.start()
    assert in_flight >= 1
    assert len(posted) == 1 and "annia/annia-worker" in str(posted[0].body["text"])


async def test_replies_to_many_commands_reuse_the_bots_connections_to_slack(stack: Stack) -> None:
    """A reply is one post to a response_url; Bolt's own `respond` opens a new connection (in
    production, a TLS handshake with hooks.slack.com) for every one of them."""
    for _ in range(6):
        reply = await stack.command("health")
        assert reply.text.startswith("KAI health on sim")
    connections = {post.connection for post in stack.slack.hook_posts}
    assert len(stack.slack.hook_posts) == 6
    assert len(connections) == 1


async def test_in_http_mode_the_ack_leaves_before_bolt_runs_and_a_shutdown_then_carries_it_out(
    tmp_path: Path,
) -> None:
    """A command's ack depends on its text alone: HTTP mode sends it before Bolt runs at all
    (here Bolt's first request, asking Slack who it is, is held). A shutdown that begins after
    the ack left waits for the command and carries it out; it does not say "restarting"."""
    async with running_stack(tmp_path) as stack:
        bolt_may_go_on = asyncio.Event()
        stack.slack.fail_next("auth.test", mode="delay_before", gate=bolt_may_go_on)
        delivery = await stack.driver.send_command("health", user_id=OPERATOR)
        assert delivery.acked and delivery.ack_text == ""
        stopping = asyncio.create_task(stack.service.stop())
        await asyncio.sleep(0)  # one turn of the loop: the shutdown begins
        assert stack.service.deps.inflight.draining
        bolt_may_go_on.set()
        await stopping
        posted = stack.slack.responses(delivery.hook_id)
        stack.service = stack.make_service()  # the stack stops its service on the way out
        await stack.service.start()
    assert [str(post.body["text"])[:17] for post in posted] == ["KAI health on sim"]
