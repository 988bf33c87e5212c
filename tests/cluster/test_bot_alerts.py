"""Alerts against a real kube-apiserver: a KAI condition fires after `hold` and resolves in the
thread; the ConfigMap state backend and the Lease kept by the bot's own token, through deploy/'s
RBAC and admission policies; two replicas, one holder.

Checks are run by calling the job (`jobs_alerts.check_cluster`) with the service's own deps and a
clock the test moves, as in the e2e tier; the cluster is real, so the aggregator's own verdict on
KEDA's metrics APIService (no pod behind it: MissingEndpoints) pages too, and the tests look at
the KAI incident by its title.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, check, thread_texts
from clocks import Clock
from conftest import serving_as_bot
from controlplane import BOT_NAMESPACE, ControlPlane
from seeding import Seeder, find

from bot.service import jobs_alerts
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, CLUSTER, ServiceStack

# As KAI's operator writes it, a newline first (test_upstream_differential_kai.py holds the
# imitation to the real operator's words).
DEPENDENCIES = "\nKAI-prometheus is missing prometheus operator"
STATE = "kai-chatops-state"
# The API server stamps objects with the real time, and the checks measure them by the clock.
pytestmark = pytest.mark.clock_from_now


def in_cluster(tmp_path: Path) -> dict[str, Any]:
    """The service as deploy/ runs it: state in a ConfigMap, a Lease an hour long (moving the
    test's clock keeps it held)."""
    return {
        "alerts": {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h"},
        "state": {"path": str(tmp_path / "state.sqlite"), "backend": "configmap"},
        "lease": {"duration": "1h"},
    }


@pytest.fixture
async def alerting(
    control_plane: ControlPlane,
    scenario: list[dict[str, Any]],
    tmp_path: Path,
    clock: Clock,
) -> AsyncIterator[ServiceStack]:
    admin = Seeder(control_plane.admin())
    for name in (STATE, f"{STATE}-{CLUSTER}", f"{STATE}-changes", f"{STATE}-requests"):
        admin.remove({"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name)})
    admin.remove(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": _meta("kai-chatops-alerts"),
        }
    )
    async with serving_as_bot(control_plane, tmp_path, clock, in_cluster(tmp_path)) as served:
        yield served


def _meta(name: str) -> dict[str, str]:
    return {"name": name, "namespace": BOT_NAMESPACE}


def kai_roots(stack: ServiceStack) -> list[PostedMessage]:
    return [m for m in stack.slack.root_messages(ALERT_CHANNEL) if "kai-config" in m.text]


def break_dependencies(admin: Seeder, scenario: list[dict[str, Any]]) -> None:
    config = find(scenario, "Config", "kai-config")
    for condition in config["status"]["conditions"]:
        if condition["type"] == "DependenciesFulfilled":
            condition.update(status="False", reason="dependencies_missing", message=DEPENDENCIES)
    admin.write_status(config, config["status"])


def heal(admin: Seeder, scenario: list[dict[str, Any]]) -> None:
    config = find(scenario, "Config", "kai-config")
    admin.write_status(config, config["status"])


async def fire(stack: ServiceStack, clock: Clock, admin: Seeder, scenario: Any) -> PostedMessage:
    await jobs_alerts.keep_lease(stack.service.deps)
    await check(stack.service)
    break_dependencies(admin, scenario)
    await check(stack.service)
    clock.advance(HOLD - 1)
    await check(stack.service)
    assert kai_roots(stack) == []  # a condition younger than `hold` pages nobody
    clock.advance(1)
    await check(stack.service)
    [root] = kai_roots(stack)
    return root


async def resolve(stack: ServiceStack, clock: Clock, admin: Seeder, scenario: Any) -> None:
    heal(admin, scenario)
    await check(stack.service)
    clock.advance(HOLD)
    await check(stack.service)


async def test_a_kai_condition_fires_after_hold_and_resolves_in_its_thread(
    alerting: ServiceStack, clock: Clock, control_plane: ControlPlane, scenario: Any
) -> None:
    admin = Seeder(control_plane.admin())
    root = await fire(alerting, clock, admin, scenario)
    assert root.text.startswith(f"[CRITICAL] {CLUSTER}: Config kai-config")
    await resolve(alerting, clock, admin, scenario)
    assert thread_texts(alerting, root)[-1].startswith(":white_check_mark: Resolved")
    edited = alerting.slack.message(ALERT_CHANNEL, root.ts)
    assert edited.text.startswith("[RESOLVED (critical)]")
    assert alerting.slack.violations == []


async def test_the_alert_state_lives_in_its_configmap_and_a_restart_continues_the_thread(
    alerting: ServiceStack, clock: Clock, control_plane: ControlPlane, scenario: Any
) -> None:
    admin = Seeder(control_plane.admin())
    root = await fire(alerting, clock, admin, scenario)
    state = admin.read("v1", "ConfigMap", f"{STATE}-{CLUSTER}", BOT_NAMESPACE)
    assert state is not None
    stored = json.loads(state["data"][f"{CLUSTER}.json"])
    assert any(a.get("root_ts") == root.ts for a in stored["alerts"]), stored

    await alerting.restart_service()
    await jobs_alerts.keep_lease(alerting.service.deps)
    await resolve(alerting, clock, admin, scenario)
    assert [r.ts for r in kai_roots(alerting)] == [root.ts]  # no second root after the restart
    assert thread_texts(alerting, root)[-1].startswith(":white_check_mark: Resolved")


async def test_the_lease_names_its_holder_and_a_second_replica_does_not_check(
    alerting: ServiceStack, clock: Clock, control_plane: ControlPlane, scenario: Any, tmp_path: Path
) -> None:
    admin = Seeder(control_plane.admin())
    await jobs_alerts.keep_lease(alerting.service.deps)
    lease = admin.read("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", BOT_NAMESPACE)
    assert lease is not None and lease["spec"]["holderIdentity"]
    first_holder = lease["spec"]["holderIdentity"]

    second_dir = tmp_path / "second"
    second_dir.mkdir()
    async with serving_as_bot(control_plane, second_dir, clock, in_cluster(second_dir)) as second:
        await jobs_alerts.keep_lease(second.service.deps)
        break_dependencies(admin, scenario)
        for _ in range(2):
            await check(second.service)
            clock.advance(HOLD)
        assert second.slack.root_messages(ALERT_CHANNEL) == []  # not the holder: no checks
    lease = admin.read("coordination.k8s.io/v1", "Lease", "kai-chatops-alerts", BOT_NAMESPACE)
    assert lease["spec"]["holderIdentity"] == first_holder
