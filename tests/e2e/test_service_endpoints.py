"""The service's own surface: probes, metrics, environment, and errors after the ack."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import aiohttp
import pytest
from waiting import wait_until

from bot.core import errors
from bot.service.deps import SlackEnv
from testbed.stack import Stack, running_stack


async def get(stack: Stack, path: str) -> tuple[int, str]:
    url = f"http://127.0.0.1:{stack.service.port}{path}"
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def test_healthz_answers_while_the_loop_turns(stack: Stack) -> None:
    assert await get(stack, "/healthz") == (200, "ok\n")


async def test_readyz_is_ready_when_slack_and_a_cluster_answer(stack: Stack) -> None:
    assert await get(stack, "/readyz") == (200, "ready\n")


async def test_readyz_fails_when_no_cluster_is_reachable(stack: Stack) -> None:
    await stack.sim.stop()
    status, body = await get(stack, "/readyz")
    assert status == 503
    assert "cluster sim" in body


async def test_readyz_fails_when_slack_refuses_the_token(stack: Stack) -> None:
    stack.slack.fail_next("auth.test", status=200, error="invalid_auth")
    status, body = await get(stack, "/readyz")
    assert status == 503
    assert "slack" in body


async def test_metrics_count_commands_and_api_requests(stack: Stack) -> None:
    await stack.command("health")
    status, body = await get(stack, "/metrics")
    assert status == 200
    assert 'kai_chatops_commands_total{outcome="ok",subcommand="health"} 1.0' in body
    assert 'kai_chatops_kube_requests_total{cluster="sim",outcome="ok",verb="list"}' in body


async def test_an_internal_failure_after_the_ack_reaches_the_user_as_a_short_message(
    tmp_path: Path,
) -> None:
    def broken_clock() -> datetime:
        raise RuntimeError("simulated bug")

    async with running_stack(tmp_path, clock=broken_clock) as stack:
        reply = await stack.command("health")
    assert reply.delivery.status == 200
    assert reply.message is not None
    assert reply.message["response_type"] == "ephemeral"
    assert "Something went wrong inside kai-chatops" in reply.text
    assert "simulated bug" not in reply.text


def test_environment_problems_are_all_reported_at_once() -> None:
    with pytest.raises(errors.ConfigError) as raised:
        SlackEnv.from_environ({"SLACK_BOT_TOKEN": "xoxp-user-token"})
    assert len(raised.value.problems) == 2


def test_an_app_token_selects_socket_mode_and_slack_api_url_is_honoured() -> None:
    env = SlackEnv.from_environ(
        {
            "SLACK_BOT_TOKEN": "xoxb-1",
            "SLACK_APP_TOKEN": "xapp-1",
            "SLACK_API_URL": "http://127.0.0.1:9/api/",
        }
    )
    assert env.socket_mode
    assert env.api_url == "http://127.0.0.1:9/api/"


async def test_while_draining_readiness_fails_and_new_commands_are_turned_away(
    stack: Stack,
) -> None:
    stack.service.deps.inflight.draining = True
    status, body = await get(stack, "/readyz")
    reply = await stack.command("health")
    assert (status, body) == (503, "shutting down\n")
    assert "restarting" in reply.text
    stack.service.deps.inflight.draining = False


async def test_a_socket_mode_link_that_carries_nothing_fails_liveness(tmp_path: Path) -> None:
    async with running_stack(tmp_path, socket_mode=True) as stack:
        assert await get(stack, "/healthz") == (200, "ok\n")
        stack.service.probes.slack_silent_after = 0.3  # the client pings every 10 s

        async def silent() -> bool:
            status, _ = await get(stack, "/healthz")
            return status == 503

        await wait_until(silent, 5, "/healthz failing on the silent socket", every=0.05)
        status, body = await get(stack, "/healthz")
        assert status == 503
        assert "slack: socket connected but silent" in body
        stack.service.probes.slack_silent_after = 2.0
        await stack.command("health")  # an envelope arrives over the socket
        assert await get(stack, "/healthz") == (200, "ok\n")


async def test_once_ready_a_cluster_outage_keeps_the_replica_taking_commands(stack: Stack) -> None:
    assert await get(stack, "/readyz") == (200, "ready\n")
    await stack.sim.stop()
    assert await get(stack, "/readyz") == (200, "ready\n")
    reply = await stack.command("health")
    assert "cannot reach the API server" in reply.text
