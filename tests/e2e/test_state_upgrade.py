"""A rolling upgrade from the release before the shards (commit 38ebae5, one shared state
ConfigMap) loses and doubles nothing, whichever way the Lease moves.

The old release runs as a process of its own (`python -m bot serve` from `git archive 38ebae5`,
same virtualenv), the new one in this process, both against one simulator and one Slack
emulator. An incident fires on the old replica; the Lease moves old → new (the old one stops),
the new replica takes an acknowledgement; the Lease moves new → old (the new one stops, an old
one starts again), which resolves it. The channel must show one root, every owed reply once and
in order, and the root's final edit (`tests/alert_invariants.py`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from alert_invariants import check_channel
from test_serve_process import free_port, is_ready
from waiting import wait_until

from bot.alerts.render import ACK_ACTION
from bot.config import settings as config
from bot.service.deps import SlackEnv, build_deps
from bot.service.server import Service
from testbed.sim import Simulator, breakage
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import ALERT_CHANNEL, OPERATOR, add_demo_people, demo_config

OLD_RELEASE = "38ebae5"  # the last landed main before the shards
REPO = Path(__file__).resolve().parents[2]
SECRET = "upgrade-test-signing-secret-0123456789"
LEASE = ("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", "kai-chatops")
LEGACY = ("v1", "ConfigMap", "kai-chatops-state", "kai-chatops")


@pytest.fixture(scope="module")
def old_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release before, as a source tree (skipped only without the git history)."""
    known = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{OLD_RELEASE}^{{commit}}"],
        capture_output=True,
    )
    if known.returncode != 0:
        pytest.skip(f"git history without {OLD_RELEASE} (a shallow clone): no old release to run")
    where = tmp_path_factory.mktemp("old-release")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", OLD_RELEASE], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


class OldReplica:
    """`python -m bot serve` of the old release, with its own port."""

    def __init__(self, source: Path, config_path: Path, slack: SlackEmulator) -> None:
        self.source, self.config_path, self.slack = source, config_path, slack
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        port = free_port()
        env = os.environ | {
            "PYTHONPATH": str(self.source),
            "SLACK_BOT_TOKEN": self.slack.bot_token,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": self.slack.api_url,
        }
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "serve", "--config", str(self.config_path),
            "--host", "127.0.0.1", "--port", str(port), cwd=str(self.source), env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        readyz = f"http://127.0.0.1:{port}/readyz"
        await wait_until(lambda: is_ready(readyz), 30, "the old release ready", every=0.1)

    async def stop(self) -> None:
        """SIGTERM: it drains, gives up the Lease and exits."""
        assert self.process is not None
        self.process.terminate()
        assert await asyncio.wait_for(self.process.wait(), 30) == 0
        self.process = None


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[Simulator, SlackEmulator, dict[str, Any]]]:
    async with Simulator(scenarios=["default"]) as sim, SlackEmulator() as slack:
        add_demo_people(slack)
        kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
        raw = demo_config(kubeconfig) | {
            "state": {"backend": "configmap", "path": str(tmp_path / "unused.sqlite")},
            "alerts": {"hold": "0s", "interval": "1s"},
            "lease": {"duration": "3s"},
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(raw))
        yield sim, slack, raw


def holder(sim: Simulator) -> str:
    lease = sim.get(*LEASE)
    return str((lease or {}).get("spec", {}).get("holderIdentity") or "")


def thread_of(slack: SlackEmulator, root_ts: str) -> list[str]:
    return [m.text for m in slack.thread(ALERT_CHANNEL, root_ts)]


async def test_a_rolling_upgrade_and_back_loses_and_doubles_nothing(
    world: tuple[Simulator, SlackEmulator, dict[str, Any]], old_release: Path, tmp_path: Path
) -> None:
    sim, slack, raw = world
    old = OldReplica(old_release, tmp_path / "config.yaml", slack)
    await old.start()
    await wait_until(lambda: holder(sim), 20, "the old release holds the Lease")
    breakage.dependencies_missing(sim)
    roots = await slack.wait_for(lambda: slack.root_messages(ALERT_CHANNEL) or None, timeout=30)
    [root] = roots
    await slack.wait_for(lambda: len(thread_of(slack, root.ts)) >= 1 or None, timeout=30)
    assert sim.get(*LEGACY) is not None  # the old release's one shared ConfigMap

    # The new release starts beside it; the old one stops: old -> new.
    settings = config.parse_settings(raw)
    env = SlackEnv(slack.bot_token, SECRET, None, slack.api_url)
    new = Service(build_deps(settings, env), env, host="127.0.0.1", port=0)
    await new.start()
    first_holder = holder(sim)
    await old.stop()
    await wait_until(lambda: holder(sim) not in ("", first_holder), 30, "the new release holds it")
    driver = SlackDriver(
        slack, bot_url=f"http://127.0.0.1:{new.port}/slack/events", signing_secret=SECRET
    )
    try:
        await driver.click_button(
            ACK_ACTION, user_id=OPERATOR, channel_id=ALERT_CHANNEL, message_ts=root.ts
        )
        await slack.wait_for(
            lambda: any("acknowledged" in t.lower() for t in thread_of(slack, root.ts)) or None,
            timeout=30,
        )
    finally:
        await driver.aclose()

    # Back: an old replica starts again, the new one stops: new -> old, which resolves it.
    await old.start()
    second_holder = holder(sim)
    await new.stop()
    await wait_until(lambda: holder(sim) not in ("", second_holder), 30, "the old one holds it")
    breakage.heal(sim)
    await slack.wait_for(
        lambda: any("Resolved" in t for t in thread_of(slack, root.ts)) or None, timeout=40
    )
    await wait_until(
        lambda: slack.root_messages(ALERT_CHANNEL)[0].text.startswith("[RESOLVED"),
        30,
        "the root edited resolved",
    )
    await old.stop()

    verdict = check_channel(slack, ALERT_CHANNEL, changes=False)  # the old release fired it
    assert verdict.ok, verdict
    assert verdict.incidents == 1
    assert [m.ts for m in slack.root_messages(ALERT_CHANNEL)] == [root.ts]
    texts = thread_of(slack, root.ts)
    assert sum("acknowledged" in t.lower() for t in texts) == 1, texts
    assert sum("Resolved" in t for t in texts) == 1, texts
