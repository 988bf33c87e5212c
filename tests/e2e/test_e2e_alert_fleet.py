"""One incident for a fleet-wide failure (`alerts.group_clusters: 3`), end to end.

Four clusters: `sim` (the stack's simulator), `b` and `c` (two contexts of one more simulator,
so they break together) and `lab` (a simulator of its own). The checks are the jobs, called with
the service's deps and a clock the test moves (`alerts.interval` is an hour: the scheduler never
checks behind the test's back, and a new alert waits twice that long for the fleet).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from alert_invariants import check_channel
from clocks import Clock
from metrics_scrape import samples, scrape, value
from waiting import wait_until

from bot.alerts.drain import SLACK_BACKOFFS
from bot.alerts.model import FLEET, AlertKey
from bot.service import jobs_alerts
from bot.service.deps import Deps, build_deps
from bot.service.server import Service
from testbed.sim import Simulator, breakage
from testbed.slackemu import PostedMessage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Stack, running_stack

INTERVAL = 3600
INTERVAL_TIME = timedelta(
    seconds=INTERVAL
)  # the scheduler's checks begin after it, as the test bed's
ONCALL = "<@U0ONCALL>"


@asynccontextmanager
async def fleet_stack(
    tmp_path: Path,
    clock: Clock,
    group_clusters: int = 3,
    slack_backoffs: Sequence[float] = SLACK_BACKOFFS,
) -> AsyncIterator[tuple[Stack, Simulator, Simulator]]:
    async with Simulator(scenarios=["default"]) as pair, Simulator(scenarios=["default"]) as lab:
        pair_config = pair.write_kubeconfig(str(tmp_path / "pair"), "b", more_contexts=["c"])
        lab_config = lab.write_kubeconfig(str(tmp_path / "lab"))
        config = {
            "clusters": [
                {"name": "sim", "kubeconfig": str(tmp_path / "kubeconfig"), "context": "sim"},
                {"name": "b", "kubeconfig": pair_config, "context": "b"},
                {"name": "c", "kubeconfig": pair_config, "context": "c"},
                {"name": "lab", "kubeconfig": lab_config, "context": "sim"},
            ],
            "alerts": {
                "hold": "0s",
                "interval": f"{INTERVAL}s",
                "repeat": "4h",
                "group_clusters": group_clusters,
                "mention": ["U0ONCALL"],
            },
            "state": {"path": str(tmp_path / "state.sqlite")},
        }
        async with running_stack(
            tmp_path,
            clock=clock,
            monotonic=clock.monotonic,
            config_overrides=config,
            slack_backoffs=slack_backoffs,
        ) as stack:
            yield stack, pair, lab


async def check(stack: Stack, clock: Clock, *clusters: str) -> None:
    clock.advance(1)
    for cluster in clusters:
        await jobs_alerts.check_cluster(stack.service.deps, cluster)


async def break_three(stack: Stack, clock: Clock, pair: Simulator) -> None:
    """Every cluster checked while healthy; then sim, b and c lose kai-config's dependencies
    (lab stays healthy)."""
    await check(stack, clock, "sim", "b", "c", "lab")
    breakage.dependencies_missing(stack.sim)
    breakage.dependencies_missing(pair)


async def fleet_lists(deps: Deps, *clusters: str) -> bool:
    """Whether the fleet incident lists exactly `clusters` in the state."""
    [incident] = (await deps.alert_store.load(FLEET)).state.alerts.values()
    return incident.clusters == clusters


def roots(stack: Stack) -> list[PostedMessage]:
    return stack.slack.root_messages(ALERT_CHANNEL)


def shown(stack: Stack, message: PostedMessage) -> str:
    """The message as it reads now (edits applied): its text and its blocks."""
    now = stack.slack.message(ALERT_CHANNEL, message.ts)
    return f"{now.text}\n{now.blocks}"


def replies(stack: Stack, root: PostedMessage) -> list[str]:
    return [m.text for m in stack.slack.thread(ALERT_CHANNEL, root.ts)]


def pages(stack: Stack) -> int:
    """How many messages mention the on-call engineer (each a page)."""
    return sum(ONCALL in f"{m.text}{m.blocks}" for m in stack.slack.messages(ALERT_CHANNEL))


def alert_id(stack: Stack, root: PostedMessage) -> str:
    found = re.search(r"Alert `(\w+)`", shown(stack, root))
    assert found, shown(stack, root)
    return found.group(1)


async def test_a_failure_on_three_clusters_is_one_incident_from_root_to_resolution(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with fleet_stack(tmp_path, clock) as (stack, pair, lab):
        await break_three(stack, clock, pair)
        await check(stack, clock, "sim")
        assert roots(stack) == []  # sim waits to learn whether the fleet fires it too
        await stack.restart_service()  # what it waits for survives a restart
        await check(stack, clock, "b", "c")

        [root] = roots(stack)
        assert "Clusters (3):* sim, b, c" in shown(stack, root) and pages(stack) == 1
        assert replies(stack, root)[0].startswith("Diagnosis of ")

        breakage.dependencies_missing(lab)
        await check(stack, clock, "lab")
        assert replies(stack, root)[-1].startswith(":heavy_plus_sign: lab fires it too")
        assert "Clusters (4):* sim, b, c, lab" in shown(stack, root)

        await stack.restart_service()
        await check(stack, clock, "sim", "b", "c", "lab")
        assert [r.ts for r in roots(stack)] == [root.ts]  # no second root after a restart

        fleet_id = alert_id(stack, root)
        on_b = AlertKey("b", "Config", "kai-config", "DependenciesFulfilled").alert_id
        acked = await stack.command(f"ack {on_b}")  # one cluster's ID: the whole incident
        assert "Acknowledged" in acked.text
        assert replies(stack, root)[-1].startswith(":eyes: Acknowledged by")
        listing = await stack.command("alerts")
        assert listing.text.count(fleet_id) == 1 and "4 clusters: sim, b, c, lab" in listing.text
        assert "acknowledged by" in listing.text
        assert (await stack.driver.open_home(user_id=OPERATOR)).status == 200
        home = str(await stack.slack.wait_for_home(OPERATOR))
        assert fleet_id in home and "4 clusters: sim, b, c, lab" in home and on_b not in home
        now = stack.slack.message(ALERT_CHANNEL, root.ts)
        assert "Run health check" not in str(now.blocks)  # each cluster has its own report
        silenced = await stack.click("Silence 1h", now.as_payload(), channel_id=ALERT_CHANNEL)
        assert "Silenced" in silenced.text
        assert replies(stack, root)[-1].startswith(":no_bell: Silenced by")

        breakage.heal(lab)
        await check(stack, clock, "lab")
        assert replies(stack, root)[-1].startswith(":white_check_mark: lab recovered")
        assert "lab (recovered)" in shown(stack, root)

        breakage.heal(stack.sim)
        breakage.heal(pair)
        await check(stack, clock, "sim", "b", "c")
        assert replies(stack, root)[-1].startswith(":white_check_mark: Resolved at")
        assert shown(stack, root).startswith("[RESOLVED (critical)] 4 clusters")
        assert [r.ts for r in roots(stack)] == [root.ts]
        assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


async def test_below_the_count_each_cluster_pages_alone_then_the_fleet_folds_them_in(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with fleet_stack(tmp_path, clock) as (stack, pair, lab):
        await check(stack, clock, "sim", "b", "c", "lab")
        breakage.dependencies_missing(stack.sim)
        breakage.dependencies_missing(lab)
        await check(stack, clock, "sim", "lab")
        assert roots(stack) == []
        clock.advance(INTERVAL)
        await check(stack, clock, "sim", "lab")
        assert roots(stack) == []  # still waiting: two intervals
        clock.advance(INTERVAL)  # nobody else fired it meanwhile: each pages on its own
        await check(stack, clock, "sim", "lab")
        own = roots(stack)
        assert sorted(r.text.split(" ")[1] for r in own) == ["lab:", "sim:"]
        assert pages(stack) == 2

        breakage.dependencies_missing(pair)
        await check(stack, clock, "b", "c")
        fleet_root = roots(stack)[-1]
        assert len(roots(stack)) == 3 and "Clusters (4):" in shown(stack, fleet_root)
        assert "Already paged by its own alert on:* sim, lab" in shown(stack, fleet_root)
        fleet_id = alert_id(stack, fleet_root)
        for root in own:  # each own incident ends pointing at the fleet's: one live root
            assert shown(stack, root).startswith("[GROUPED (critical)]")
            assert f"fleet incident, `{fleet_id}`" in replies(stack, root)[-1]
        assert ONCALL not in shown(stack, fleet_root)  # the fleet root pages nobody again
        assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


async def test_a_cluster_joining_while_the_fleet_root_is_on_its_way_is_in_its_list(
    tmp_path: Path,
) -> None:
    """`group_clusters: 2`, three clusters breaking at once: sim and b open the fleet incident,
    and c joins while the drain prepares the root (its anchor, a read of the channel, is held
    on the wire). The root that goes out lists all three, as the state does when it is sent."""
    clock = Clock()
    async with fleet_stack(tmp_path, clock, group_clusters=2) as (stack, pair, _):
        await break_three(stack, clock, pair)
        await check(stack, clock, "sim")  # waits to learn whether the fleet fires it too
        anchor = stack.slack.hold_calls(lambda method, _: method == "conversations.history")
        deps = stack.service.deps
        opening = asyncio.create_task(jobs_alerts.check_cluster(deps, "b"))
        await stack.slack.wait_for(lambda: anchor.held == 1)
        joining = asyncio.create_task(jobs_alerts.check_cluster(deps, "c"))

        await wait_until(lambda: fleet_lists(deps, "sim", "b", "c"), 10, "c listed")
        anchor.release()
        await asyncio.gather(opening, joining)

        [root] = roots(stack)
        assert "Clusters (3):* sim, b, c" in shown(stack, root), shown(stack, root)
        assert root.text.startswith("[CRITICAL] 3 clusters: sim, b, c")
        assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


async def test_a_cluster_joining_while_the_roots_edit_is_on_its_way_gets_an_edit_of_its_own(
    tmp_path: Path,
) -> None:
    """c's join edits the fleet root; while that edit is held on the wire, lab joins too (in
    the same interval, so no reply: only the root's edit tells it). The older edit landing
    does not count for the newer one: the root ends up listing lab."""
    clock = Clock()
    async with fleet_stack(tmp_path, clock, group_clusters=2) as (stack, pair, lab):
        await break_three(stack, clock, pair)
        await check(stack, clock, "sim", "b")
        [root] = roots(stack)
        edit = stack.slack.hold_calls(lambda method, _: method == "chat.update")
        deps = stack.service.deps
        joining = asyncio.create_task(jobs_alerts.check_cluster(deps, "c"))
        await stack.slack.wait_for(lambda: edit.held == 1)
        breakage.dependencies_missing(lab)
        late = asyncio.create_task(jobs_alerts.check_cluster(deps, "lab"))
        await wait_until(lambda: fleet_lists(deps, "sim", "b", "c", "lab"), 10, "lab listed")
        edit.release()  # lab's drain waited behind c's
        await asyncio.gather(joining, late)

        assert "Clusters (4):* sim, b, c, lab" in shown(stack, root), shown(stack, root)
        assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


def without(stack: Stack, clock: Clock, *removed: str) -> None:
    """The service's next start reads a configuration with `removed` taken out (their alert
    state stays in the store, as it would)."""
    kept = tuple(c for c in stack.settings.clusters if c.name not in removed)
    settings = dataclasses.replace(stack.settings, clusters=kept)
    env = stack.service.env

    def make_service() -> Service:
        deps = build_deps(settings, env, clock=clock, monotonic=clock.monotonic)
        return Service(deps, env, host="127.0.0.1", port=0, first_checks_after=INTERVAL_TIME)

    stack.make_service = make_service


async def test_a_cluster_removed_from_the_configuration_is_no_longer_watched_never_recovered(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with fleet_stack(tmp_path, clock) as (stack, pair, _):
        await break_three(stack, clock, pair)
        await check(stack, clock, "sim", "b", "c")
        [root] = roots(stack)
        assert "Clusters (3):* sim, b, c" in shown(stack, root)

        without(stack, clock, "c")
        await stack.restart_service()
        await check(stack, clock, "sim", "b", "lab")
        said = replies(stack, root)[-1]
        assert said.startswith(":heavy_minus_sign: No longer watched") and "c" in said
        assert "c (no longer watched)" in shown(stack, root)
        assert "recovered" not in said and "recovered" not in shown(stack, root)

        without(stack, clock, "sim", "b", "c")  # the last clusters firing it leave too
        await stack.restart_service()
        await check(stack, clock, "lab")
        after_diagnosis = replies(stack, root)[1:]
        assert after_diagnosis[-1].startswith(":heavy_minus_sign: Ended at")
        for text in [*after_diagnosis, shown(stack, root)]:
            assert "recovered" not in text.lower() and "resolved" not in text.lower(), text
        assert shown(stack, root).startswith("[ENDED (critical)] 3 clusters")
        assert "sim (no longer watched), b (no longer watched)" in shown(stack, root)
        assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


async def test_twelve_clusters_failing_at_once_are_one_root_and_a_reply_or_two_not_one_each(
    tmp_path: Path,
) -> None:
    """Twelve contexts of one simulator break together; their checks come one after another
    (a fleet's checks are spread, and each takes its turn at the fleet's state): one root lists
    them all as they come, and the thread says who joined in a reply or two, not one per
    cluster (a channel posts about one message a second)."""
    clock = Clock()
    names = [f"gpu-{i:02}" for i in range(12)]
    async with Simulator(scenarios=["default"]) as fleet:
        kubeconfig = fleet.write_kubeconfig(
            str(tmp_path / "fleet"), names[0], more_contexts=names[1:]
        )
        config = {
            "clusters": [{"name": n, "kubeconfig": kubeconfig, "context": n} for n in names],
            "alerts": {"hold": "0s", "interval": f"{INTERVAL}s", "group_clusters": 3},
            "state": {"path": str(tmp_path / "state.sqlite")},
        }
        async with running_stack(
            tmp_path, clock=clock, monotonic=clock.monotonic, config_overrides=config
        ) as stack:
            await check(stack, clock, *names)
            breakage.dependencies_missing(fleet)
            await check(stack, clock, *names)
            [root] = roots(stack)
            assert f"Clusters (12):* {', '.join(names)}" in shown(stack, root)
            clock.advance(INTERVAL)
            await check(stack, clock, *names)  # the next round: what is left to tell is told

            said = replies(stack, root)
            assert said[0].startswith("Diagnosis of ") and len(said) <= 4, said
            assert said[1].startswith("What changed on "), said  # on the cluster diagnosed
            assert all(name in "".join([*said, shown(stack, root)]) for name in names)
            assert len(stack.slack.calls_to("chat.postMessage")) <= 5
            assert check_channel(stack.slack, ALERT_CHANNEL).problems == []


async def test_how_long_slack_has_owed_the_fleets_root_is_on_metrics_as_the_fleets(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with fleet_stack(tmp_path, clock, slack_backoffs=(0.0, 0.0, 0.0)) as (stack, pair, _):
        # Every try of the drain after the check that opens the fleet incident fails, surely
        # not applied (Slack's own fatal_error); the next check's drain delivers.
        stack.slack.fail_next("chat.postMessage", status=200, error="fatal_error", times=4)
        await break_three(stack, clock, pair)
        await check(stack, clock, "sim", "b", "c")
        assert stack.slack.faults_left("chat.postMessage") == 0 and roots(stack) == []
        clock.advance(599)
        await check(stack, clock, "lab")  # counts what the fleet owes, then delivers it

        served = samples(await scrape(stack.service.port))
        assert value(served, "kai_chatops_outbox_oldest_owed_age_seconds", cluster=FLEET) == 600
        [root] = roots(stack)
        assert "Clusters (3):* sim, b, c" in shown(stack, root)
