"""No one can jam the changes (issue 36, finding 1), end to end on `state.backend: configmap`.

The pen test: 550 approval requests with a 480-character reason filled the replay memory's
ConfigMap (`-once`) to 900 901 bytes, and from then on every change by anyone was refused
("cannot tell whether this request was already handled"), for days. Approval requests now live
in a ConfigMap of their own, bounded; the replay memory's room is its own, and a memory left full
frees itself. Cluster `sim` needs approval, `other` (the same simulated cluster) does not. Each
store is filled to its limit with the largest records the service could have written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from approval_records import approval_config, records_to
from clocks import Clock
from stack_steps import confirm

from bot.access import approval_room, approvals, once
from bot.access.approval_store import configmap_name_of
from bot.changes.approval import expire_requests
from bot.keda.usecase import AckWait
from testbed.stack import OPERATOR, Stack, running_stack

pytestmark = pytest.mark.clock_from_now

SHORT_WAIT = AckWait(timeout=0.3, interval=0.05)
LEAD = "U0LEAD"
NAMESPACE, STATE = "kai-chatops", "kai-chatops-state"
PAUSED = "autoscaling.keda.sh/paused"
NAMESPACE_META = {"name": NAMESPACE}


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    overrides = approval_config(str(tmp_path / "kubeconfig"), [LEAD])
    overrides["state"] = {"backend": "configmap", "configmap": STATE, "namespace": NAMESPACE}
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides
    ) as running:
        running.slack.add_user(LEAD, "lead")
        running.slack.add_usergroup("S0ONCALL", "platform-oncall", [OPERATOR, LEAD])
        running.sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": NAMESPACE_META})
        yield running


def seed(stack: Stack, name: str, data: Mapping[str, str]) -> None:
    metadata = {"name": name, "namespace": NAMESPACE}
    stack.sim.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data})


def stored(stack: Stack, name: str) -> dict[str, Any]:
    found = stack.sim.get("v1", "ConfigMap", name, NAMESPACE) or {}
    return dict(found.get("data") or {})


def paused(stack: Stack) -> bool:
    found = stack.sim.get("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia") or {}
    return (found["metadata"].get("annotations") or {}).get(PAUSED) == "true"


async def test_a_replay_memory_a_release_before_filled_with_approvals_takes_the_next_change(
    stack: Stack, clock: Clock
) -> None:
    # As the pen test left it: approval records of the release before in `-once`, past its
    # MAX_BYTES (900 901 bytes), some still waiting, the oldest asked 20 minutes ago.
    jammed = records_to(900_901, clock() - timedelta(minutes=20))
    jammed |= records_to(20_000, clock(), first=10_000)
    seed(stack, once.configmap_name(STATE), jammed)
    assert once.stored_bytes(stored(stack, once.configmap_name(STATE))) > once.MAX_BYTES

    await confirm(stack, "pause annia/annia-worker --cluster other node drain")

    assert paused(stack), stack.slack.responses
    left = stored(stack, once.configmap_name(STATE))
    assert once.stored_bytes(left) < 10_000  # what it holds now: its own keys
    assert not [key for key in left if key.startswith("approval-")]


async def test_a_replay_memory_full_of_keys_past_their_window_takes_the_next_change(
    stack: Stack, clock: Clock
) -> None:
    # The memory as a flood of Confirms leaves it six minutes later, to the brim: every key past
    # its window, and none of them a signed request's (whose claim comes first).
    past_confirm = repr((clock() - timedelta(seconds=1)).timestamp())
    data: dict[str, str] = {}
    each = once.stored_bytes({f"confirm-{0:016x}": past_confirm}) - 1  # with its comma
    count = (once.MAX_BYTES - once.stored_bytes(data)) // each
    data |= {f"confirm-{n:016x}": past_confirm for n in range(count)}
    assert once.MAX_BYTES - each < once.stored_bytes(data) <= once.MAX_BYTES
    seed(stack, once.configmap_name(STATE), data)

    await confirm(stack, "pause annia/annia-worker --cluster other node drain")

    assert paused(stack)
    assert len(stored(stack, once.configmap_name(STATE))) <= 3  # the command, the click, Confirm


async def test_a_full_store_of_approvals_refuses_a_new_request_and_changes_without_approval_run(
    stack: Stack, clock: Clock
) -> None:
    full = records_to(approval_room.MAX_BYTES, clock())
    seed(stack, configmap_name_of(STATE), full)

    ask = await stack.command(f"pause annia/annia-worker {'y' * 480}")  # as the pen test did
    assert ask.message is not None
    refused = await stack.click("Confirm", ask.message)
    assert f"{len(full)} changes are waiting for approval" in refused.text, refused.text
    assert "nothing was changed" in refused.text
    assert not paused(stack) and stored(stack, configmap_name_of(STATE)) == full

    await confirm(stack, "pause annia/annia-worker --cluster other node drain")
    assert paused(stack)


async def test_a_full_store_of_approvals_takes_a_request_once_the_others_expired(
    stack: Stack, clock: Clock
) -> None:
    full = records_to(approval_room.MAX_BYTES, clock())
    seed(stack, configmap_name_of(STATE), full)
    clock.advance(approvals.LIFETIME)  # every one of them has expired, nobody swept

    ask = await stack.command("pause annia/annia-worker node drain")
    assert ask.message is not None
    waiting = await stack.click("Confirm", ask.message)

    assert "waits for a second operator's approval" in waiting.text, waiting.text
    kept = stored(stack, configmap_name_of(STATE))
    assert once.stored_bytes(kept) <= approval_room.MAX_BYTES
    change_id = waiting.text.split()[1]
    done = await stack.command(f"approve {change_id}", user_id=LEAD)
    assert paused(stack), done.text


async def test_the_sweep_removes_records_a_day_past_their_expiry_with_no_request_made(
    stack: Stack, clock: Clock
) -> None:
    seed(stack, configmap_name_of(STATE), records_to(50_000, clock()))
    clock.advance(approvals.LIFETIME + timedelta(days=1))

    await expire_requests(stack.service.deps)  # the Lease holder's sweep, by hand

    assert stored(stack, configmap_name_of(STATE)) == {}
