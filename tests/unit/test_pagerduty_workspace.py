"""The workspace address a page links under (`delivery.WorkspaceUrl`): `auth.test`'s `url`,
asked once; while Slack cannot be asked, Slack's own address, without asking at every page."""

from __future__ import annotations

from typing import Any

from bot.integrations.pagerduty.delivery import WorkspaceUrl


class AuthTest:
    """`auth.test` as Slack answers it, or failing while `down`."""

    def __init__(self) -> None:
        self.asked = 0
        self.down = False

    async def __call__(self) -> dict[str, Any]:
        self.asked += 1
        if self.down:
            raise ConnectionError("Slack is down")
        return {"ok": True, "url": "https://team.slack.com/"}


async def test_the_workspace_is_asked_once_and_kept() -> None:
    auth_test = AuthTest()
    workspace = WorkspaceUrl(auth_test)
    assert [await workspace(), await workspace()] == ["https://team.slack.com/"] * 2
    assert auth_test.asked == 1


async def test_while_slack_cannot_say_pages_link_to_slack_and_ask_again_only_later() -> None:
    auth_test, now = AuthTest(), [0.0]
    auth_test.down = True
    workspace = WorkspaceUrl(auth_test, monotonic=lambda: now[0])
    assert [await workspace(), await workspace()] == ["https://slack.com/"] * 2
    assert auth_test.asked == 1

    auth_test.down = False
    now[0] = WorkspaceUrl.ASK_AGAIN_AFTER
    assert await workspace() == "https://team.slack.com/"
    assert auth_test.asked == 2
