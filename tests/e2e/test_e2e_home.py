"""The App Home tab end to end: Slack's `app_home_opened` in (signed HTTP or Socket Mode), the
service reads the simulated cluster, its alerts and its change journal, and `views.publish` out.

The Home tab lists each cluster's verdict with its findings that are not Healthy, the active
alerts (ID, state, age, who acknowledged or silenced), what is paused or suspended (who, why,
until), the last 10 changes made through the bot, and a `Refresh` button; viewers only.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alert_stack import HOLD, overrides
from clocks import START, Clock
from home_views import lines
from stack_steps import confirm

from bot.access.audit import Change
from bot.home.render import REFRESH_ACTION
from bot.keda.usecase import AckWait
from bot.service import jobs_alerts
from bot.slack import limits
from testbed.sim import breakage
from testbed.stack import ALERT_CHANNEL, CLUSTER, OPERATOR, VIEWER, Stack, running_stack

# No KEDA controller runs here: do not wait long for one to acknowledge a pause.
SHORT_WAIT = AckWait(timeout=0.2, interval=0.05)


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides(tmp_path)
    ) as s:
        yield s


def after(view: Mapping[str, Any], title: str) -> list[str]:
    """The lines under one header, up to the next header."""
    blocks = view["blocks"]
    start = next(i for i, b in enumerate(blocks) if b["type"] == "header" and title in str(b))
    part = []
    for block in blocks[start + 1 :]:
        if block["type"] == "header":
            break
        part += lines({"blocks": [block]})
    return part


async def open_home(stack: Stack, user: str = OPERATOR, count: int = 1) -> dict[str, Any]:
    delivery = await stack.driver.open_home(user_id=user)
    assert delivery.status == 200
    return await stack.slack.wait_for_home(user, count=count)


async def fire_and_acknowledge(stack: Stack, clock: Clock) -> str:
    """A critical alert held past `hold`, acknowledged by the operator; its ID."""
    breakage.dependencies_missing(stack.sim)
    await jobs_alerts.check_cluster(stack.service.deps, CLUSTER)
    clock.now += timedelta(seconds=HOLD)
    await jobs_alerts.check_cluster(stack.service.deps, CLUSTER)
    [root] = stack.slack.root_messages(ALERT_CHANNEL)
    alert_id = str(root.blocks[-1]["elements"][0]["value"]).split(":")[1]
    acked = await stack.command(f"ack {alert_id}")
    assert acked.text.startswith(f"Acknowledged alert {alert_id}")
    return alert_id


async def test_the_home_tab_lists_clusters_alerts_pauses_suspends_and_changes(
    stack: Stack, clock: Clock
) -> None:
    alert_id = await fire_and_acknowledge(stack, clock)
    await confirm(stack, "pause annia/annia-worker for 2h node drain")
    await confirm(stack, "suspend hr flux-system/keda for 3h chart hotfix")
    clock.now += timedelta(minutes=30)

    view = await open_home(stack)

    assert view["type"] == "home" and stack.slack.violations == []
    assert after(view, "Clusters") == [
        ":red_circle: *sim*: Degraded · 1 finding not Healthy",
        "      :red_circle: Config kai-config: Degraded — DependenciesFulfilled is False at "
        "generation 1",
    ]
    [alert] = after(view, "Active alerts (1)")
    assert alert.startswith(f":red_circle: `{alert_id}` sim · Config kai-config")
    assert f":eyes: acknowledged by <@{OPERATOR}>" in alert
    assert alert.endswith("(fired 30m ago)")
    assert after(view, "Paused and suspended") == [
        ":double_vertical_bar: *ScaledJob annia/annia-worker* on sim — paused by "
        f"<@{OPERATOR}> at 2026-08-24 08:01 UTC, until 2026-08-24 10:01 UTC: node drain",
        ":double_vertical_bar: *HelmRelease flux-system/keda* on sim — suspended by "
        f"<@{OPERATOR}> at 2026-08-24 08:01 UTC, until 2026-08-24 11:01 UTC: chart hotfix",
    ]
    changes = after(view, "Recent changes")
    assert [line.split(" · ", 1)[1] for line in changes] == [
        f"<@{OPERATOR}> suspend HelmRelease flux-system/keda on sim: ok — chart hotfix",
        f"<@{OPERATOR}> pause ScaledJob annia/annia-worker on sim: not acknowledged by KEDA "
        "— node drain",
    ]
    assert "Refresh" in lines(view)


async def test_flux_objects_suspended_in_any_namespace_are_listed_with_one_list_per_kind(
    stack: Stack,
) -> None:
    release = stack.sim.get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", "flux-system")
    assert release is not None
    release["metadata"] = {"name": "podinfo", "namespace": "apps"}
    stack.sim.apply(release)
    await confirm(stack, "suspend hr apps/podinfo for 1h canary")
    stack.sim.clear_requests()

    view = await open_home(stack)

    [held] = after(view, "Paused and suspended")
    assert held.startswith(":double_vertical_bar: *HelmRelease apps/podinfo* on sim — suspended")
    flux_lists = [
        (r.resource, r.namespace)
        for r in stack.sim.requests
        if r.verb == "list" and r.group.endswith("toolkit.fluxcd.io")
    ]
    assert sorted(flux_lists) == [
        (kind, None)
        for kind in sorted(
            ("helmreleases", "kustomizations", "gitrepositories", "helmrepositories",
             "ocirepositories")
        )
    ]  # fmt: skip


async def test_refresh_publishes_the_tab_again_with_what_changed(stack: Stack) -> None:
    first = await open_home(stack)
    assert after(first, "Paused and suspended") == ["Nothing paused or suspended."]
    await confirm(stack, "suspend ks flux-system/flux-system")

    delivery = await stack.driver.click_home_button(REFRESH_ACTION, user_id=OPERATOR)

    assert delivery.status == 200
    second = await stack.slack.wait_for_home(OPERATOR, count=2)
    assert second["id"] == first["id"]
    [held] = after(second, "Paused and suspended")
    assert "*Kustomization flux-system/flux-system* on sim — suspended by" in held
    assert held.endswith(", until resumed")


async def test_only_viewers_see_it_and_others_are_told_before_any_cluster_read(
    tmp_path: Path, clock: Clock
) -> None:
    access = {"access": {"operators": [OPERATOR], "viewers": [OPERATOR]}}
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides(tmp_path, **access)
    ) as stack:
        stack.sim.clear_requests()

        view = await open_home(stack, VIEWER)

        assert stack.sim.requests == []
        text = "\n".join(lines(view))
        assert "You are not allowed to see the kai-chatops Home tab" in text
        assert "Clusters" not in text


async def test_the_recent_changes_are_the_last_ten_and_survive_a_restart(stack: Stack) -> None:
    journal = stack.service.deps.journal
    assert journal is not None
    for number in range(12):
        at = START + timedelta(minutes=number)
        await journal.add(
            Change(OPERATOR, "reconcile", f"HelmRelease flux-system/r{number}", "ok", at)
        )
    await stack.restart_service()

    view = await open_home(stack)

    changes = after(view, "Recent changes")
    assert len(changes) == 10
    assert "HelmRelease flux-system/r11 on" not in changes[0]  # targets are shown as recorded
    assert changes[0].endswith("reconcile HelmRelease flux-system/r11: ok")
    assert changes[-1].endswith("reconcile HelmRelease flux-system/r2: ok")


async def test_with_the_configmap_backend_another_replica_sees_the_same_changes(
    tmp_path: Path, clock: Clock
) -> None:
    state = {"state": {"backend": "configmap"}, "lease": {"enabled": False}}
    async with running_stack(
        tmp_path, keda_wait=SHORT_WAIT, clock=clock, config_overrides=overrides(tmp_path, **state)
    ) as stack:
        await confirm(stack, "suspend gitrepo flux-system/flux-system repo move")
        stored = stack.sim.get("v1", "ConfigMap", "kai-chatops-state-changes", "kai-chatops")
        assert stored is not None
        other = stack.make_service()
        await other.start()
        try:
            assert other.deps.journal is not None
            [change] = await other.deps.journal.recent(10)
        finally:
            await other.stop()
    assert (change.user, change.action, change.reason) == (OPERATOR, "suspend", "repo move")


async def test_a_text_from_the_cluster_or_a_user_cannot_mention_anyone_on_the_tab(
    stack: Stack,
) -> None:
    await confirm(stack, "suspend hr flux-system/keda <!channel> see <https://evil.example|x>")
    stack.sim.patch(
        "keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia",
        patch={"metadata": {"annotations": {
            "autoscaling.keda.sh/paused": "true", "kai-chatops/paused-by": "<!here>",
        }}},
    )  # fmt: skip

    view = await open_home(stack)

    text = json.dumps(view)
    assert "<!channel>" not in text and "<!here>" not in text and "<https://" not in text
    assert "&lt;!channel&gt;" in text and "&lt;!here&gt;" in text


async def test_socket_mode_delivers_the_event_too(tmp_path: Path, clock: Clock) -> None:
    async with running_stack(
        tmp_path,
        keda_wait=SHORT_WAIT,
        clock=clock,
        socket_mode=True,
        config_overrides=overrides(tmp_path),
    ) as stack:
        delivery = await stack.driver.open_home(user_id=OPERATOR)
        assert delivery.mode == "socket" and delivery.acked
        view = await stack.slack.wait_for_home(OPERATOR)
        assert after(view, "Clusters") == [":white_check_mark: *sim*: Healthy"]


async def test_fifty_clusters_of_findings_stay_within_the_view_limits(
    tmp_path: Path, clock: Clock
) -> None:
    kubeconfig = str(tmp_path / "kubeconfig")
    clusters = [
        {"name": f"gpu-{n:02d}", "kubeconfig": kubeconfig, "context": "sim"} for n in range(50)
    ]
    async with running_stack(
        tmp_path,
        keda_wait=SHORT_WAIT,
        clock=clock,
        config_overrides=overrides(tmp_path, clusters=clusters),
    ) as stack:
        breakage.dependencies_missing(stack.sim)
        breakage.apiservice_down(stack.sim)
        breakage.operator_down(stack.sim)

        view = await open_home(stack)

    assert stack.slack.violations == []
    assert limits.check_view(view) == [] and len(view["blocks"]) <= limits.MAX_VIEW_BLOCKS
    clusters_part = after(view, "Clusters")
    heads = [line for line in clusters_part if line.startswith(":red_circle: *gpu-")]
    shown_findings = [line for line in clusters_part if line.startswith("      ")]
    assert heads and len(shown_findings) >= 3 * len(heads)
    assert len(heads) == 50 or clusters_part[-1].startswith("… ")


async def test_an_unsigned_home_event_gets_401_and_publishes_nothing(stack: Stack) -> None:
    stack.sim.clear_requests()

    delivery = await stack.driver.open_home(user_id=OPERATOR, signature="v0=" + "0" * 64)

    assert delivery.status == 401
    assert stack.slack.calls_to("views.publish") == [] and stack.sim.requests == []
