"""Fencing of alert posts, one replica's side: no call outlives its right to act, the holder is
asked again right before a post, a copy answered after another one was recorded is deleted, and
a new holder looks at the channel at its first check even when the state owes nothing.

The desk runs against the simulator with a narrow fake of our own Slack gateway
(`tests/alert_fakes.py`), so the moment another replica acts can be placed exactly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from alert_fakes import T0, FakeSlack, fire, make_desk

from bot.alerts import outbox
from bot.alerts.drain import Poster
from bot.alerts.model import ClusterAlerts
from bot.alerts.store import SqliteStore, update
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator


def incident_of(state: ClusterAlerts) -> str:
    [alert] = state.alerts.values()
    return alert.incident


async def test_a_replica_that_lost_the_lease_after_saving_its_attempt_posts_nothing(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    never = Poster("replica-a", lambda: False, lambda: T0)
    await fire(make_desk(store, FakeSlack(), poster=never), gateway, sim)  # owed, not sent
    # The holder while the drain looks (the notices, the incident: what is owed goes before
    # any reconciliation), then deposed between saving its attempt and posting.
    answers = iter([True, True])

    losing = Poster("replica-b", lambda: next(answers, False), lambda: T0)
    slack = FakeSlack()
    await make_desk(store, slack, poster=losing).drain("sim")

    assert slack.posts == []  # asked again right before the post: no longer the holder
    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.outbox[0].attempted_by == "replica-b" and not alert.root_ts


async def test_a_call_still_unanswered_when_the_right_to_act_ends_is_abandoned(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    class Hanging(FakeSlack):
        async def post(self, *args: Any, **kwargs: Any) -> str:
            await asyncio.Event().wait()  # Slack never answers
            raise AssertionError("unreachable")

    acting = Poster("replica-a", lambda: True, lambda: T0, acting_left=lambda: 0.05)
    await asyncio.wait_for(fire(make_desk(store, Hanging(), poster=acting), gateway, sim), 30)

    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.outbox[0].was_attempted and not alert.root_ts  # unknown: looked for later


async def test_a_copy_answered_after_another_replica_recorded_its_own_is_deleted(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    class Overtaken(FakeSlack):
        """While our root post is on the wire, another replica records its own copy."""

        async def post(
            self,
            channel: str,
            message: Mapping[str, Any],
            *,
            thread_ts: str | None = None,
            metadata: Mapping[str, Any] | None = None,
        ) -> str:
            ts = await super().post(channel, message, thread_ts=thread_ts, metadata=metadata)
            if thread_ts is None:
                await update(store, "sim", adopt_other_copy)
            return ts

    def adopt_other_copy(state: ClusterAlerts) -> tuple[ClusterAlerts, None]:
        where = incident_of(state)
        head = outbox.head(state, where)
        assert head is not None
        return outbox.adopted(state, where, head.effect_id, "C0ALERTS", "1699999999.000001"), None

    slack = Overtaken()
    await fire(make_desk(store, slack), gateway, sim)

    [alert] = (await store.load("sim")).state.alerts.values()
    assert alert.root_ts == "1699999999.000001"  # the other replica's copy is kept
    roots = [m for m in slack.stored if m["thread_ts"] is None]
    assert roots == []  # ours was deleted


async def test_a_new_holders_first_check_at_rest_still_deletes_a_copy_the_deposed_one_left(
    gateway: KubeGateway, sim: Simulator, store: SqliteStore
) -> None:
    slack = FakeSlack()
    await fire(
        make_desk(store, slack, poster=Poster("replica-a", lambda: True, lambda: T0)), gateway, sim
    )
    [root] = [m for m in slack.stored if m["thread_ts"] is None]
    slack.stored.append({**root, "ts": "1700000000.999999"})  # replica a's post, landed twice
    assert outbox.owes_nothing((await store.load("sim")).state)  # the state is at rest

    taking_over = Poster("replica-b", lambda: True, lambda: T0, term=lambda: 1)
    await make_desk(store, slack, poster=taking_over).run_check(gateway, T0 + timedelta(minutes=2))

    assert [m["ts"] for m in slack.stored if m["thread_ts"] is None] == [root["ts"]]
