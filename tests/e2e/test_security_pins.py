"""Regressions at the security edges, each pinned by a test that fails on the bug (issue 11 item 8).

Each of these bugs was planted once and survived the suite of its day: operators listed by
user-group ID never granted; deactivated accounts allowed; a failed `users.info` lookup taken as
"not restricted"; the Confirm signature check removed; a grace period on confirmation expiry;
`Silence 4h` mapped to 1h; the Lease renewed as seldom as it lasts; the "still the Lease
holder?" check made before the read instead of after it. (Unescaped text is pinned by
tests/unit/test_render_hostile.py.)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import Clock
from sim_gateway import connect

from bot.access import confirmations, policy
from bot.alerts.lease import LeaderLease
from bot.alerts.store import SqliteStore
from bot.alerts.usecase import AlertDesk
from bot.config import settings as config
from bot.config.settings import AccessSettings, LeaseSettings
from bot.core import errors
from bot.core.metrics import Metrics
from bot.kube.gateway import KubeGateway
from bot.service import jobs_alerts
from bot.slack import blocks
from testbed.sim import Simulator, breakage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

SCALED_JOB = ("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia")
T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def is_paused(stack: Stack) -> bool:
    obj = stack.sim.get(*SCALED_JOB) or {}
    annotations = obj.get("metadata", {}).get("annotations") or {}
    return annotations.get("autoscaling.keda.sh/paused") == "true"


# --- who may change things ------------------------------------------------------------------


def test_pin_a_user_group_id_is_a_group_entry_and_grants_its_members() -> None:
    access = AccessSettings(operators=("S0ONCALL",), viewers=None)
    assert policy.group_entries(["U0ONE", "S0ONCALL", "@oncall", "W0TWO"]) == [
        "S0ONCALL",
        "@oncall",
    ]
    assert policy.is_operator("U0MEMBER", access, {"S0ONCALL": frozenset({"U0MEMBER"})})
    assert not policy.is_operator("U0OTHER", access, {"S0ONCALL": frozenset({"U0MEMBER"})})


async def test_pin_operators_listed_by_user_group_id_may_pause(tmp_path: Path) -> None:
    access = {"access": {"operators": ["S0ONCALL"], "viewers": "everyone"}}
    async with running_stack(tmp_path, config_overrides=access, keda_controller=True) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        await stack.click("Confirm", ask.message)
        assert is_paused(stack)


@pytest.mark.parametrize(
    "account",
    [{"deleted": True}, {"is_restricted": True}],
    ids=["deactivated", "guest"],
)
async def test_pin_a_deactivated_or_guest_operator_changes_nothing(
    tmp_path: Path, account: dict[str, bool]
) -> None:
    listed = {"access": {"operators": [OPERATOR, "U0GONE"], "viewers": "everyone"}}
    async with running_stack(tmp_path, config_overrides=listed) as stack:
        stack.slack.add_user("U0GONE", "left-the-company", **account)
        stack.sim.clear_requests()
        reply = await stack.command("pause annia/annia-worker drain", user_id="U0GONE")
        assert "cannot make changes" in reply.text
        assert stack.sim.requests == []


async def test_pin_a_failed_users_info_lookup_refuses_the_change(tmp_path: Path) -> None:
    async with running_stack(tmp_path) as stack:
        stack.slack.fail_next("users.info", status=200, error="fatal_error", times=5)
        stack.sim.clear_requests()
        reply = await stack.command("pause annia/annia-worker drain")
        assert "cannot make changes" in reply.text
        assert stack.sim.requests == []


# --- Confirm: signed, expiring at five minutes sharp -------------------------------------------


def tampered(sealed: str, **changes: str) -> str:
    """The button value with its parameters edited and its signature kept."""
    payload, _, signature = sealed.rpartition(".")
    body = json.loads(base64.urlsafe_b64decode(payload))
    body["p"] |= changes
    edited = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).decode()
    return f"{edited}.{signature}"


async def test_pin_a_confirm_button_whose_value_was_edited_changes_nothing(tmp_path: Path) -> None:
    async with running_stack(tmp_path) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        sealed = next(
            e["value"] for b in ask.message["blocks"] for e in b.get("elements", []) if "value" in e
        )
        stack.sim.clear_requests()
        delivery = await stack.driver.click_button(
            blocks.CONFIRM_ACTION,
            value=tampered(sealed, name="annia-api", kind="ScaledObject"),
            user_id=OPERATOR,
            channel_id="C0DEMO",
            message=ask.message,
        )
        reply = await stack.slack.wait_for_response(delivery.hook_id, timeout=10)
    assert "not valid" in reply.body["text"]
    assert [r for r in stack.sim.requests if r.verb == "patch"] == []


def test_pin_a_confirmation_expires_at_five_minutes_sharp() -> None:
    key = confirmations.derive_key("xoxb-test")
    pending = confirmations.new_pending("pause", {}, user_id="U1", channel_id="C1", now=T0)
    sealed = confirmations.seal(pending, key)
    assert confirmations.unseal(sealed, key, T0 + timedelta(minutes=5, microseconds=-1))
    for late in (timedelta(minutes=5), timedelta(minutes=5, seconds=1)):
        with pytest.raises(errors.UserError, match="expired"):
            confirmations.unseal(sealed, key, T0 + late)


async def test_pin_a_click_one_second_after_expiry_changes_nothing(tmp_path: Path) -> None:
    clock = Clock()
    async with running_stack(tmp_path, clock=clock) as stack:
        ask = await stack.command("pause annia/annia-worker drain")
        assert ask.message is not None, ask.text
        clock.now += timedelta(minutes=5, seconds=1)
        reply = await stack.click("Confirm", ask.message)
    assert "expired" in reply.text
    assert not is_paused(stack)


# --- alert buttons ------------------------------------------------------------------------------


async def test_pin_silence_4h_silences_for_four_hours(tmp_path: Path) -> None:
    clock = Clock()
    async with running_stack(
        tmp_path, clock=clock, config_overrides={"alerts": {"hold": "0s"}}
    ) as stack:
        breakage.dependencies_missing(stack.sim)
        await jobs_alerts.check_cluster(stack.service.deps, "sim")
        [root] = await stack.slack.wait_for_messages(ALERT_CHANNEL)
        reply = await stack.click("Silence 4h", {"blocks": list(root.blocks)})
        desk = stack.service.deps.alerts
        assert desk is not None
        [cluster] = await desk.list_alerts()
    assert "for 4h" in reply.text
    assert [a.silenced_until for a in cluster.alerts.values()] == [clock.now + timedelta(hours=4)]


# --- the Lease and the checks it guards ---------------------------------------------------------


@pytest.fixture
def gateway(sim: Simulator, tmp_path: Path) -> KubeGateway:
    return connect(sim, tmp_path)


async def test_pin_a_holder_renewing_on_schedule_never_stops_being_the_leader(
    gateway: KubeGateway, sim: Simulator
) -> None:
    sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kai-chatops"}})
    ticks = [0.0]  # the Lease is timed on a monotonic clock, moved here by hand
    settings = LeaseSettings(duration=timedelta(seconds=15))
    lease = LeaderLease(gateway, settings, identity="me", monotonic=lambda: ticks[0])
    now = T0
    assert await lease.renew(now)
    for _ in range(4):  # each renewal is due before leadership lapses
        step = lease.renew_every.total_seconds()
        ticks[0] += step - 1e-6
        assert lease.is_leader()
        ticks[0] += 1e-6
        now += lease.renew_every
        assert await lease.renew(now)
    assert lease.renew_every <= lease.duration / 3


@dataclass
class PostsSeen:
    posts: list[str] = field(default_factory=list)

    async def post(self, channel: str, message: Any, *, thread_ts: str | None = None) -> str:
        self.posts.append(str(message["text"]))
        return f"1700000000.{len(self.posts):06d}"

    async def update(self, channel: str, ts: str, message: Any) -> None:
        self.posts.append(str(message["text"]))


class LosingTheLeaseDuringTheRead:
    """A gateway whose reads take so long that the Lease is lost meanwhile."""

    def __init__(self, gateway: KubeGateway, lost: Callable[[], None]) -> None:
        self._gateway = gateway
        self._lost = lost
        self.cluster = gateway.cluster

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._gateway, name)
        if not callable(attribute):
            return attribute

        async def read(*args: Any, **kwargs: Any) -> Any:
            answer = await attribute(*args, **kwargs)
            self._lost()
            return answer

        return read


async def test_pin_the_lease_is_asked_about_after_the_read_not_before(
    gateway: KubeGateway, sim: Simulator, tmp_path: Path
) -> None:
    settings = config.parse_settings(
        {
            "clusters": [{"name": "sim"}],
            "slack": {"alert_channel": ALERT_CHANNEL},
            "alerts": {"hold": "0s"},
        }
    )
    store = SqliteStore(str(tmp_path / "alerts.sqlite"))
    slack = PostsSeen()
    desk = AlertDesk(settings, store, slack, Metrics())  # type: ignore[arg-type]
    breakage.dependencies_missing(sim)
    leader = {"now": True}
    slow = LosingTheLeaseDuringTheRead(gateway, lambda: leader.update(now=False))
    try:
        await desk.run_check(slow, T0, still_leader=lambda: leader["now"])  # type: ignore[arg-type]
    finally:
        store.close()
    assert slack.posts == []
