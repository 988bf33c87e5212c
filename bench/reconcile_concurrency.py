"""Bench: N concurrent `/kai reconcile` commands, each a Flux reconcile that takes 1 s.

The service, the simulator (its Flux controller spending `--seconds` on every reconcile) and the
Slack side (emulator and driver) each run in a process of their own, as in production. Prints
the wall time from the first command to the last result (goal: close to one reconcile, not N of
them), the ack latencies (goal: all under 50 ms) and the Kubernetes requests the service made.

    .venv/bin/python bench/reconcile_concurrency.py [--reconciles 20] [--seconds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import sys
import tempfile
import time
from pathlib import Path

import yaml
from common import free_port, ms, percentile, start_process, wait_ready

from testbed.sim import Simulator
from testbed.sim.controller_answers import Behaviour
from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.stack import OPERATOR, add_demo_people, demo_config

HR_API = "helm.toolkit.fluxcd.io/v2"
ACK_GOAL = 0.050
SECRET = "bench-signing-secret"
HERE = str(Path(__file__).resolve())


async def serve_simulator(kubeconfig: str, releases: int, seconds: float) -> None:
    """The simulator process: `releases` HelmReleases, controllers on; prints counts on request."""
    async with Simulator(scenarios=("default",)) as sim:
        sim.start_controllers(Behaviour("succeed", seconds))
        template = sim.get(HR_API, "HelmRelease", "keda", "flux-system")
        assert template is not None
        for index in range(releases + 1):  # one more, to warm up with
            release = copy.deepcopy(template)
            release["metadata"] = {"name": f"app-{index:02d}", "namespace": "flux-system"}
            sim.apply(release)
        sim.write_kubeconfig(kubeconfig)
        print("ready", flush=True)
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
        while line := await reader.readline():
            if line.strip() == b"clear":
                sim.clear_requests()
            print(len(sim.requests), flush=True)


async def ask(sim: asyncio.subprocess.Process, command: bytes) -> int:
    """Send a line to the simulator process; the request count it answers."""
    assert sim.stdin is not None and sim.stdout is not None
    sim.stdin.write(command + b"\n")
    await sim.stdin.drain()
    return int(await sim.stdout.readline())


async def one_reconcile(
    driver: SlackDriver, slack: SlackEmulator, name: str
) -> tuple[float, float, str]:
    """(ack latency, seconds to the final result, the result's first line)."""
    started = time.perf_counter()
    delivery = await driver.send_command(f"reconcile hr flux-system/{name}", user_id=OPERATOR)
    final = await slack.wait_for_response(delivery.hook_id, count=2, timeout=60)
    return delivery.latency, time.perf_counter() - started, str(final.body["text"]).split("\n")[0]


async def measure(workdir: Path, reconciles: int, seconds: float) -> None:
    kubeconfig = str(workdir / "kubeconfig")
    sim = await start_process(
        HERE, "--serve-simulator", kubeconfig, "--reconciles", str(reconciles),
        "--seconds", str(seconds), stdin=True,
    )  # fmt: skip
    assert sim.stdout is not None
    await sim.stdout.readline()
    config_path = workdir / "config.yaml"
    config_path.write_text(yaml.safe_dump(demo_config(kubeconfig)))
    port = free_port()
    async with SlackEmulator() as slack:
        add_demo_people(slack)
        env = {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET}
        env["SLACK_API_URL"] = slack.api_url
        service = await start_process("-m", "bot", "serve", "--config", str(config_path),
                              "--port", str(port), "--host", "127.0.0.1", env=env)  # fmt: skip
        try:
            await wait_ready(f"http://127.0.0.1:{port}/readyz", time.monotonic() + 30)
            url = f"http://127.0.0.1:{port}/slack/events"
            async with SlackDriver(slack, bot_url=url, signing_secret=SECRET) as driver:
                await one_reconcile(driver, slack, f"app-{reconciles:02d}")  # warm up
                await ask(sim, b"clear")
                started = time.perf_counter()
                names = [f"app-{index:02d}" for index in range(reconciles)]
                results = await asyncio.gather(*(one_reconcile(driver, slack, n) for n in names))
                wall = time.perf_counter() - started
                requests = await ask(sim, b"count")
        finally:
            for process in (service, sim):
                process.terminate()
                await process.wait()
    report(reconciles, seconds, wall, results, requests)


def report(
    reconciles: int,
    seconds: float,
    wall: float,
    results: list[tuple[float, float, str]],
    requests: int,
) -> None:
    acks = [ack for ack, _, _ in results]
    ends = [end for _, end, _ in results]
    reconciled = sum(1 for *_, line in results if line.endswith(": reconciled"))
    print(f"{reconciles} concurrent Flux reconciles, {seconds:g} s each (simulated controller);")
    print("service, simulator and Slack side in their own processes")
    print(f"  wall time, first command to last result: {wall:.2f} s")
    print(f"    (one after the other: at least {reconciles * seconds:g} s)")
    print(f"  ack      p50 {ms(percentile(acks, 0.5))}  p99 {ms(percentile(acks, 0.99))}", end="")
    print(f"  max {ms(max(acks))}; at or over 50 ms: {sum(a >= ACK_GOAL for a in acks)}")
    print(f"  result   p50 {ms(percentile(ends, 0.5))}  max {ms(max(ends))}")
    print(f"  reconciled: {reconciled}/{reconciles}; Kubernetes API requests: {requests}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reconciles", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--serve-simulator", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_simulator:
        asyncio.run(serve_simulator(args.serve_simulator, args.reconciles, args.seconds))
    else:
        with tempfile.TemporaryDirectory() as workdir:
            asyncio.run(measure(Path(workdir), args.reconciles, args.seconds))
