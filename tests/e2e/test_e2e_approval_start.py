"""`kai-chatops serve` refuses an approvers list naming nobody who is an operator (exit 2),
asking the Slack emulator who is in the user groups; when Slack cannot be asked, it starts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot import cli
from bot.changes.approvers import check_approvers
from bot.config import settings as config
from bot.service.deps import SlackEnv, build_deps
from testbed.sim import Simulator
from testbed.slackemu import SlackEmulator

OPERATOR, LEAD = "U0OPERATOR", "U0LEAD"


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as running:
        running.add_user(OPERATOR, "operator")
        running.add_user(LEAD, "lead")
        running.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR])
        running.add_usergroup("S0LEADS", "platform-leads", [LEAD])
        yield running


@pytest.fixture
async def kubeconfig(tmp_path: Path) -> AsyncIterator[str]:
    async with Simulator(scenarios=["kai-healthy"]) as sim:
        yield sim.write_kubeconfig(str(tmp_path / "kubeconfig"))


def write_config(tmp_path: Path, kubeconfig: str, operators: list[str]) -> dict[str, Any]:
    raw = {
        "clusters": [{"name": "prod", "kubeconfig": kubeconfig, "context": "sim"}],
        "slack": {"command": "/kai", "alert_channel": "C0ALERTS"},
        "access": {
            "operators": operators,
            "approval": {"clusters": ["prod"], "approvers": ["@platform-leads"]},
        },
        "state": {"path": str(tmp_path / "state.sqlite")},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(raw))
    return raw


async def test_serve_refuses_approvers_who_are_no_operators_with_exit_2(
    tmp_path: Path,
    kubeconfig: str,
    slack: SlackEmulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_config(tmp_path, kubeconfig, ["@platform-oncall"])
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.bot_token)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "start-check-secret")
    monkeypatch.setenv("SLACK_API_URL", slack.api_url)
    argv = ["serve", "--config", str(tmp_path / "config.yaml"), "--host", "127.0.0.1"]

    status = await asyncio.to_thread(cli.main, [*argv, "--port", "0"])

    assert status == 2
    assert (
        "access.approval.approvers: @platform-leads names nobody who is also in access.operators"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "operators",
    [["@platform-oncall", LEAD], ["@platform-oncall", "@platform-leads"]],
    ids=["an-approver-in-a-group-is-an-operator-by-id", "the-lists-share-a-group"],
)
async def test_approvers_with_an_operator_among_them_pass_the_start_check(
    tmp_path: Path, kubeconfig: str, slack: SlackEmulator, operators: list[str]
) -> None:
    raw = write_config(tmp_path, kubeconfig, operators)
    env = SlackEnv(slack.bot_token, "secret", None, slack.api_url)
    deps = build_deps(config.parse_settings(raw), env)
    try:
        await check_approvers(deps)
    finally:
        deps.close()


async def test_when_slack_cannot_be_asked_at_start_the_service_starts_and_says_so(
    tmp_path: Path, kubeconfig: str, caplog: pytest.LogCaptureFixture
) -> None:
    raw = write_config(tmp_path, kubeconfig, ["@platform-oncall"])
    env = SlackEnv("xoxb-test", "secret", None, "http://127.0.0.1:9/api/")
    deps = build_deps(config.parse_settings(raw), env, slack_timeout=2.0)
    try:
        await check_approvers(deps)
    finally:
        deps.close()
    assert "cannot check at start that an approver" in caplog.text
