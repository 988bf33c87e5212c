"""Bench: how long the command line takes to answer, and `serve` to be ready.

`kai-chatops --help`, `--version` and `evaluate FILE` (a Deployment) each run several times as a
terminal runs them (the installed console script, a process each): their median wall time (goal
<= 0.25 s). Then `kai-chatops serve` with 1 and with 200 clusters (contexts of one kubeconfig on
one simulator in a process of its own, Slack emulated in this one): the time from starting the
process to the first 200 from `/readyz` (goal <= 0.8 s with one cluster, <= 2 s with 200 as in
issue 15). Beside each wall time, the CPU the process used: on a machine busy with other work
the wall time grows, the CPU time much less. bot/ and handlers/ are compiled to bytecode first,
as an installed wheel is (`common.compile_product`). `--imports` adds the slowest imports of
each command, and the packages slowest to import of `serve` until it is ready
(`-X importtime`).

    .venv/bin/python bench/startup.py [--runs 7] [--clusters 1 200] [--imports]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml
from common import (
    compile_product,
    cpu_seconds,
    free_port,
    goal,
    record,
    record_text,
    start_process,
)

from testbed.slackemu import SlackEmulator
from testbed.stack import add_demo_people, demo_config

CLI_GOAL_S, READY_GOAL_S = 0.25, 0.8
READY_GOALS = {1: READY_GOAL_S, 200: 2.0, 1000: 2.0}  # 200: issue 15's goal, kept
SECRET = "bench-signing-secret"
IMPORT_TIME = re.compile(
    r"import time:\s+(?P<self>\d+) \|\s+(?P<cumulative>\d+) \|\s+(?P<name>\S+)"
)
FLEET = str(Path(__file__).with_name("fleet_scale.py"))
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: kai-scheduler-default, namespace: kai-scheduler, generation: 2}
spec: {replicas: 1}
status:
  observedGeneration: 2
  replicas: 1
  readyReplicas: 1
  availableReplicas: 1
  updatedReplicas: 1
  conditions: [{type: Available, status: "True"}]
"""


def console_script() -> str:
    """The installed `kai-chatops` next to this interpreter (what a terminal runs)."""
    return str(Path(sys.executable).with_name("kai-chatops"))


def cli_seconds(args: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and CPU seconds of `kai-chatops ARGS`, which must exit 0."""
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([console_script(), *args], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times), statistics.median(cpu)


def record_start(figure: str, wall: float, cpu: float, limit: float) -> None:
    """The figure is the wall time; the CPU time beside it shows what a busy machine added."""
    measured = f"{wall:.3f} s ({cpu:.2f} s CPU)"
    record_text(f"start-up: {figure}", f"<= {limit:g} s", measured, wall <= limit)


def slowest_imports(args: list[str], count: int = 8) -> list[str]:
    """The `count` modules `kai-chatops ARGS` imported that took longest, children included."""
    code = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return slowest(done.stderr, count)


def slowest(importtime: str, count: int = 8) -> list[str]:
    """The `count` slowest imports of an `-X importtime` report, children included (its lines:
    `import time: SELF | CUMULATIVE | NAME`, both in microseconds)."""
    rows = []
    for line in importtime.splitlines():
        found = IMPORT_TIME.match(line)
        if found:
            rows.append((int(found["cumulative"]), found["name"]))
    return [f"{us / 1000:6.1f} ms {name}" for us, name in sorted(rows, reverse=True)[:count]]


def by_package(importtime: str, count: int = 12) -> list[str]:
    """The `count` packages whose modules took longest to import, each module's own time
    summed by top-level package (the standard library as one): `serve` imports a thousand
    modules, nested deep, so its slowest single imports would all name the same chain."""
    totals: dict[str, int] = {}
    modules: dict[str, int] = {}
    for line in importtime.splitlines():
        found = IMPORT_TIME.match(line)
        if found:
            top = found["name"].split(".")[0]
            package = "(standard library)" if top in sys.stdlib_module_names else top
            totals[package] = totals.get(package, 0) + int(found["self"])
            modules[package] = modules.get(package, 0) + 1
    slowest_first = sorted(totals.items(), key=lambda item: item[1], reverse=True)[:count]
    return [f"{us / 1000:6.1f} ms {name} ({modules[name]} modules)" for name, us in slowest_first]


async def ready_seconds(
    workdir: Path, clusters: int, slack: SlackEmulator, imports: list[str] | None = None
) -> tuple[float, float]:
    """Seconds from starting `serve` with `clusters` clusters to its first 200 from /readyz,
    and the CPU seconds the service had used by then (what a busy machine does not inflate).
    With `imports` (a list to fill), the service runs under `-X importtime` and the list gets
    the packages slowest to import before it was ready (the run's times are then inflated)."""
    kubeconfig = str(workdir / f"kubeconfig-{clusters}")
    raw = demo_config(kubeconfig)
    names = [f"gpu-{i:03}" for i in range(clusters)]
    raw["clusters"] = [{"name": n, "kubeconfig": kubeconfig, "context": n} for n in names]
    raw["state"] = {"path": str(workdir / f"state-{clusters}.sqlite")}
    config_path = workdir / f"config-{clusters}.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    port = free_port()
    env = {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET}
    env["SLACK_API_URL"] = slack.api_url
    started = time.monotonic()
    serve = ["-m", "bot", "serve", "--config", str(config_path), "--port", str(port)]
    serve += ["--host", "127.0.0.1"]
    log = workdir / "importtime.txt"
    if imports is None:
        service = await start_process(*serve, env=env)
    else:  # to a file: a pipe nobody reads until the end would fill and stop the service
        with log.open("w") as stderr:
            service = await asyncio.create_subprocess_exec(
                sys.executable, "-X", "importtime", *serve,
                env={**os.environ, **env}, stderr=stderr,
            )  # fmt: skip
    try:
        # A process is starting: there is no event to wait on, so poll often.
        async with aiohttp.ClientSession() as session:
            while time.monotonic() - started < 60:
                try:
                    async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
                        if response.status == 200:
                            return time.monotonic() - started, cpu_seconds(service.pid)
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.005)
        raise TimeoutError(f"serve with {clusters} clusters not ready in 60 s")
    finally:
        service.terminate()
        await service.wait()
        if imports is not None:
            imports += by_package(log.read_text())


Figures = tuple[float, float, list[str]]


async def serve_figures(counts: list[int], runs: int, imports: bool) -> dict[int, Figures]:
    """Median ready seconds and CPU seconds per cluster count (fewer runs for large fleets),
    and with `imports` the slowest imports of one more run (not timed)."""
    with tempfile.TemporaryDirectory() as tmp:
        sim = await start_process(
            FLEET, "--serve-simulator", tmp, "--clusters", *map(str, counts), stdin=True
        )
        assert sim.stdin is not None and sim.stdout is not None
        sim.stdin.close()  # no request counting here
        await sim.stdout.readline()
        try:
            async with SlackEmulator() as slack:
                add_demo_people(slack)
                ready = {}
                for count in counts:
                    times = [
                        await ready_seconds(Path(tmp), count, slack)
                        for _ in range(runs if count == 1 else max(1, runs // 3))
                    ]
                    slowest_rows: list[str] = []
                    if imports:
                        await ready_seconds(Path(tmp), count, slack, slowest_rows)
                    ready[count] = (
                        statistics.median(t for t, _ in times),
                        statistics.median(c for _, c in times),
                        slowest_rows,
                    )
        finally:
            sim.terminate()
            await sim.wait()
    return ready


def main(runs: int, counts: list[int], imports: bool) -> None:
    compile_product()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "deployment.yaml"
        manifest.write_text(DEPLOYMENT)
        commands = {
            "--help": ["--help"],
            "--version": ["--version"],
            "evaluate FILE": ["evaluate", str(manifest)],
        }
        print(f"start-up, median of {runs} runs (wall time, a process each; bytecode compiled):")
        for label, args in commands.items():
            wall, cpu = cli_seconds(args, runs)
            seconds = round(wall, 3)
            print(f"  {goal(f'kai-chatops {label}', seconds, CLI_GOAL_S, 's')}; {cpu:.2f} s CPU")
            record_start(f"kai-chatops {label}", wall, cpu, CLI_GOAL_S)
            if imports:
                print("\n".join(f"      {row}" for row in slowest_imports(args)))
    ready = asyncio.run(serve_figures(counts, runs, imports))
    for count, (wall, cpu, slowest_rows) in ready.items():
        seconds = round(wall, 3)
        label = f"serve ready, {count} cluster{'s' if count > 1 else ''}"
        limit = READY_GOALS.get(count)
        cpu_used = f"; {cpu:.2f} s of CPU by then"
        if limit is None:
            print(f"  {label}: {seconds:g} s (no goal of its own{cpu_used})")
            record(f"start-up: {label}", seconds, None, "s")
        else:
            print(f"  {goal(label, seconds, limit, 's')}{cpu_used}")
            record_start(label, wall, cpu, limit)
        for row in slowest_rows:
            print(f"      {row}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--clusters", type=int, nargs="+", default=[1, 200])
    parser.add_argument("--imports", action="store_true", help="the slowest imports of each")
    args = parser.parse_args()
    main(args.runs, args.clusters, args.imports)
