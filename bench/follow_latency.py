"""Bench: from a controller's status write to the result in Slack, followed by watch vs by polls.

`kai-chatops serve` runs in a process of its own; the simulator (with its Flux controller, each
reconcile taking a random 0.1-1.5 s) and the Slack side run in this one, so the moment the
controller writes the status that ends a reconcile is known exactly (an in-process subscription
to the simulator's store). For N reconciles of a HelmRelease it prints the time from that write
to the result posted at the emulator (goal p99 <= 100 ms) and the Kubernetes API requests per
reconcile, first as the service does it (watch), then with `watch` forbidden (the polls it falls
back to, which is what every reconcile did before), in the same run. Then the same for a KEDA
pause (this bench plays KEDA and sets `Paused` after a random 0.1-1.5 s).

    .venv/bin/python bench/follow_latency.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml
from common import free_port, goal, ms, percentile, record, start_process, wait_ready

from bot.slack import blocks as render
from testbed.sim import Simulator
from testbed.sim.selectors import parse_selector
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import DEMO_CHANNEL, OPERATOR, add_demo_people, demo_config

SECRET = "bench-signing-secret"
HR_API, HR = "helm.toolkit.fluxcd.io/v2", "kai-scheduler"
SJ_API, SJ = "keda.sh/v1alpha1", "annia-worker"
GOAL_MS = 100.0
PAUSED = "autoscaling.keda.sh/paused"
UNPAUSED = {
    "metadata": {"annotations": {PAUSED: None, "autoscaling.keda.sh/paused-replicas": None}}
}
Round = Callable[[SlackDriver, SlackEmulator, Simulator], Awaitable[tuple[float, int]]]


class LastWrite:
    """When the simulator last stored a change of one object that `is_final` (perf_counter)."""

    def __init__(self, sim: Simulator, api: str, kind: str, namespace: str, is_final: Any) -> None:
        self.at = 0.0
        rtype = sim.store.resolve(api, kind)

        def seen(_: str, obj: dict[str, Any]) -> None:
            if is_final(obj):
                self.at = time.perf_counter()

        selector = parse_selector()
        _, self.stop = sim.store.watch(rtype, namespace, selector, sim.store.resource_version, seen)


def is_reconciled(obj: dict[str, Any]) -> bool:
    requested = (obj["metadata"].get("annotations") or {}).get("reconcile.fluxcd.io/requestedAt")
    return bool(requested) and (obj.get("status") or {}).get("lastHandledReconcileAt") == requested


def set_condition(sim: Simulator, status: str, reason: str) -> None:
    sim.set_condition(SJ_API, "ScaledJob", SJ, "annia", "Paused", status, reason, reason)


async def one_reconcile(
    driver: SlackDriver, slack: SlackEmulator, sim: Simulator
) -> tuple[float, int]:
    """(seconds from the controller's write to the result at Slack, API requests made)."""
    slow = {"sim.kai-chatops/reconcile": f"slow:{random.randint(100, 1500)}ms"}
    sim.patch(HR_API, "HelmRelease", HR, "flux-system", patch={"metadata": {"annotations": slow}})
    sim.clear_requests()
    written = LastWrite(sim, HR_API, "HelmRelease", "flux-system", is_reconciled)
    try:
        delivery = await driver.send_command(f"reconcile hr flux-system/{HR}", user_id=OPERATOR)
        await slack.wait_for_response(delivery.hook_id, count=2, timeout=30)
        posted = time.perf_counter()
    finally:
        written.stop()
    await watches_ended(sim, "helmreleases")
    return posted - written.at, len(sim.requests)


async def one_pause(driver: SlackDriver, slack: SlackEmulator, sim: Simulator) -> tuple[float, int]:
    """A pause confirmed, KEDA playing late: seconds from KEDA's write to the result, requests."""
    sim.patch(SJ_API, "ScaledJob", SJ, "annia", patch=UNPAUSED)
    set_condition(sim, "False", "ScaledJobUnpaused")
    ask = await driver.send_command(f"pause annia/{SJ} for 1h bench", user_id=OPERATOR)
    message = (await slack.wait_for_response(ask.hook_id, timeout=30)).body
    sim.clear_requests()
    keda = asyncio.create_task(play_keda(sim, random.uniform(0.1, 1.5)))
    click = await driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=message
    )
    await slack.wait_for_response(click.hook_id, timeout=30)
    posted = time.perf_counter()
    written = await keda
    await watches_ended(sim, "scaledjobs")
    return posted - written, len(sim.requests)


async def play_keda(sim: Simulator, after: float) -> float:
    """Set `Paused=True` `after` seconds once the annotation is there; when it was written."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        obj = sim.get(SJ_API, "ScaledJob", SJ, "annia") or {}
        if (obj["metadata"].get("annotations") or {}).get(PAUSED) == "true":
            await asyncio.sleep(after)  # KEDA takes its time
            set_condition(sim, "True", "ScaledJobPaused")
            return time.perf_counter()
        await asyncio.sleep(0.005)
    raise RuntimeError("the bot never wrote the pause annotation")


async def watches_ended(sim: Simulator, resource: str) -> None:
    """Until the round's own watch of `resource` is in the simulator's request log (a watch is
    logged once its stream ends; the alert check's collection watches stay open)."""
    deadline = time.monotonic() + 5
    while not any(r.verb == "watch" and r.resource == resource for r in sim.requests):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the watch of {resource} stayed open")
        await asyncio.sleep(0.02)


async def measure(rounds: int, workdir: Path) -> None:
    async with Simulator(scenarios=("default",)) as sim, SlackEmulator() as slack:
        sim.start_controllers(keda=False)
        add_demo_people(slack)
        config = demo_config(sim.write_kubeconfig(str(workdir / "kubeconfig")))
        config["state"] = {"path": str(workdir / "state.sqlite")}
        (workdir / "config.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        env = {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET}
        env["SLACK_API_URL"] = slack.api_url
        config_path = str(workdir / "config.yaml")
        service = await start_process("-m", "bot", "serve", "--config", config_path,
                                      "--port", str(port), "--host", "127.0.0.1",
                                      env=env)  # fmt: skip
        try:
            await wait_ready(f"http://127.0.0.1:{port}/readyz", time.monotonic() + 30)
            url = f"http://127.0.0.1:{port}/slack/events"
            async with SlackDriver(slack, bot_url=url, signing_secret=SECRET) as driver:
                for name, one in (("Flux reconcile", one_reconcile), ("KEDA pause", one_pause)):
                    await one(driver, slack, sim)  # warm up
                    watched = [await one(driver, slack, sim) for _ in range(rounds)]
                    sim.faults.add(403, verb="watch", times=None)
                    polled = [await one(driver, slack, sim) for _ in range(rounds)]
                    sim.faults.clear()
                    report(name, rounds, watched, polled)
        finally:
            service.terminate()
            await service.wait()


def report(
    name: str, rounds: int, watched: list[tuple[float, int]], polled: list[tuple[float, int]]
) -> None:
    print(f"{name}, {rounds} rounds each; status write that ends it -> result posted in Slack:")
    for label, results in (("watch", watched), ("polls (watch forbidden)", polled)):
        late = [t for t, _ in results]
        requests = sum(n for _, n in results) / len(results)
        print(f"  {label:<24} p50 {ms(percentile(late, 0.5))}  p99 {ms(percentile(late, 0.99))}"
              f"  max {ms(max(late))}; API requests each: {requests:.1f}")  # fmt: skip
    p99 = round(percentile([t for t, _ in watched], 0.99) * 1000, 1)
    print(f"  {goal(f'{name} by watch, p99', p99, GOAL_MS)}")
    record(f"{name} followed by watch: write -> result posted, p99", p99, GOAL_MS, "ms")
    fewer = sum(n for _, n in watched) < sum(n for _, n in polled)
    print(f"  fewer API requests by watch than by polls: {'met' if fewer else 'MISSED'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(args.rounds, Path(tmp)))
