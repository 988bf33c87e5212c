"""`kai-chatops serve` as a process: SIGTERM drains and exits 0; JSON logs keep no secret."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml
from waiting import wait_until

from testbed.sim import Simulator
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import OPERATOR, demo_config

SECRET = "serve-test-signing-secret-0123456789"
LEASE = ("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def is_ready(url: str) -> bool:
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return response.status == 200
    except aiohttp.ClientError:
        return False


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Simulator, SlackEmulator, Path]]:
    async with Simulator(scenarios=["default"]) as sim, SlackEmulator() as slack:
        slack.add_user(OPERATOR, "oncall-operator")
        kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
        raw = demo_config(kubeconfig) | {"state": {"backend": "configmap"}}
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(raw))
        yield sim, slack, path


async def test_sigterm_finishes_in_flight_work_releases_the_lease_and_exits_zero(
    world: tuple[Simulator, SlackEmulator, Path],
) -> None:
    sim, slack, config_path = world
    port = free_port()
    env = os.environ | {
        "SLACK_BOT_TOKEN": slack.bot_token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.api_url,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--config", str(config_path), "--host",
        "127.0.0.1", "--port", str(port), "--log-format", "json",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        # A process is starting, so there is no event to wait on; each check is an HTTP request.
        readyz = f"http://127.0.0.1:{port}/readyz"
        await wait_until(lambda: is_ready(readyz), 20, "service ready", every=0.05)

        async def lease_held() -> bool:
            lease = sim.get(*LEASE)
            return bool(lease and lease["spec"].get("holderIdentity"))

        await wait_until(lease_held, 20, "lease taken", every=0.05)
        sim.faults.add(None, resource="configs", delay=1.5)  # keeps the next check in flight
        driver = SlackDriver(
            slack, bot_url=f"http://127.0.0.1:{port}/slack/events", signing_secret=SECRET
        )
        delivery = await driver.send_command("health", user_id=OPERATOR)
        await driver.aclose()
        assert delivery.acked
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0
    reply = slack.responses(delivery.hook_id)
    assert reply and str(reply[0].body["text"]).startswith("KAI health on sim")
    lease = sim.get(*LEASE)
    assert lease is not None and not lease["spec"].get("holderIdentity")
    lines = stderr.decode().splitlines()
    assert lines and all(json.loads(line)["level"] for line in lines)
    assert slack.bot_token not in stderr.decode()
    assert SECRET not in stderr.decode()
