"""Bench: N concurrent `/kai health` commands against the full stack on loopback.

Prints ack latency (p50, p99, max; goal p99 <= 10 ms) and end-to-end reply latency in HTTP mode
(signed requests) and in Socket Mode (envelopes over the websocket), and the Kubernetes API
requests one health check makes, on the default scenario and on a cluster with many shards and
Deployments. In HTTP mode the same bursts are then sent to a bare aiohttp server
(bench/bare_ack.py) on the same CPU: the service's ack p99 is printed against that floor, a
figure of the code more than of the machine (no goal of its own; on a 2-core VM it moves
between 1.8x and 2.5x from run to run).

The service gets a core of its own, the bench (playing Slack) and the simulator share the
other: in production Slack does not run on the service's machine, and left to the scheduler the
three processes trade places between rounds (the same code then measures 9 or 14 ms).

HTTP mode sends each round's N requests at once, each in one write on a keep-alive connection of
its own, and times each from its write to the last byte of its ack: what Slack, sending from
many machines, would see. (A Python HTTP client with N requests in flight times its own
scheduling too: aiohttp's writes each body in a task of its own, so no request leaves before all
N have been prepared, and the first one's clock runs meanwhile.)

    .venv/bin/python bench/ack_latency.py [--concurrency 50] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import yaml
from common import (
    free_port,
    goal,
    grow_cluster,
    ms,
    percentile,
    record,
    start_process,
    wait_ready,
)

from testbed.slackemu import SlackDriver, SlackEmulator
from testbed.slackemu.driver import Mode, SignedRequest
from testbed.stack import Stack, demo_config, running_stack

ACK_GOAL_MS = 10.0
SLACK_PATH = "/slack/events"
T = TypeVar("T")
BENCH_CPU, SERVICE_CPU = 0, 1


def pin(pid: int, cpu: int) -> None:
    """Keep a process on one CPU, where there are two and the OS lets us (Linux)."""
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(pid, {cpu})


async def one_command(driver: SlackDriver, slack: SlackEmulator, mode: Mode) -> tuple[float, float]:
    started = time.perf_counter()
    delivery = await driver.send_command("health", user_id="U0OPERATOR", mode=mode)
    await slack.wait_for_response(delivery.hook_id, timeout=60)
    return delivery.latency, time.perf_counter() - started


class Burst:
    """N keep-alive HTTP/1.1 connections to the bot; each round writes N requests at once."""

    def __init__(self, port: int, concurrency: int) -> None:
        self.port, self.concurrency = port, concurrency
        self.connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def open(self) -> None:
        for _ in range(self.concurrency):
            self.connections.append(await asyncio.open_connection("127.0.0.1", self.port))

    def close(self) -> None:
        for _, writer in self.connections:
            writer.close()

    def send(self, driver: SlackDriver) -> tuple[list[SignedRequest], list[float]]:
        """N signed `/kai health` written at once, one per connection; when each was written."""
        requests = [driver.signed_command("health", user_id="U0OPERATOR") for _ in self.connections]
        sent = []
        for (_, writer), request in zip(self.connections, requests, strict=True):
            sent.append(time.perf_counter())
            writer.write(http_post(SLACK_PATH, request.body, request.headers))
        return requests, sent

    async def acked(self, i: int, sent: float) -> float:
        """Seconds from `sent` to the last byte of connection i's answer, a 200."""
        status = await read_response(self.connections[i][0])
        acked = time.perf_counter() - sent
        assert status == 200, f"the bot answered {status}"
        return acked

    async def round(self, driver: SlackDriver, slack: SlackEmulator) -> list[tuple[float, float]]:
        """(ack, reply) seconds of each of N `/kai health` sent at once."""
        requests, sent = self.send(driver)

        async def answer(i: int) -> tuple[float, float]:
            acked = await self.acked(i, sent[i])
            await slack.wait_for_response(requests[i].hook_id, timeout=60)
            return acked, time.perf_counter() - sent[i]

        return await asyncio.gather(*(answer(i) for i in range(self.concurrency)))

    async def bare_round(self, driver: SlackDriver) -> list[float]:
        """Ack seconds of the same N requests to bench/bare_ack.py (nothing runs after)."""
        _, sent = self.send(driver)
        return await asyncio.gather(*(self.acked(i, sent[i]) for i in range(self.concurrency)))


async def measured(one_round: Callable[[], Awaitable[list[T]]], rounds: int) -> list[T]:
    """Every result of `rounds` rounds, after one to warm up (Bolt's auth.test, a connection
    per concurrent command: Slack keeps its connections to an app open too). The bench's own
    garbage collector is off meanwhile, so it cannot stop the clock: it holds every record of
    the emulated Slack, and one full collection here is tens of milliseconds."""
    await one_round()
    gc.collect()
    gc.disable()
    try:
        return [result for _ in range(rounds) for result in await one_round()]
    finally:
        gc.enable()


def http_post(path: str, body: str, headers: dict[str, str]) -> bytes:
    encoded = body.encode()
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(encoded)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + encoded


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one HTTP/1.1 response with a Content-Length; its status."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    length = next(
        (int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:")),
        0,
    )
    await reader.readexactly(length)
    return int(head[0].split(" ")[1])


async def requests_per_check(stack: Stack) -> int:
    stack.sim.clear_requests()
    await stack.command("health")
    return len(stack.sim.requests)


async def latency(workdir: Path, concurrency: int, rounds: int, mode: Mode) -> None:
    """The service and the simulator in processes of their own, as in production."""
    kubeconfig = str(workdir / "kubeconfig")
    sim = await start_process("-m", "testbed.sim", "--kubeconfig", kubeconfig)
    pin(sim.pid, BENCH_CPU)
    assert sim.stdout is not None
    await sim.stdout.readline()
    config_path = workdir / "config.yaml"
    config_path.write_text(yaml.safe_dump(demo_config(kubeconfig)))
    secret, port = "bench-signing-secret", free_port()
    async with SlackEmulator() as slack:
        env = {
            "SLACK_BOT_TOKEN": slack.bot_token,
            "SLACK_SIGNING_SECRET": secret,
            "SLACK_API_URL": slack.api_url,
        }
        if mode == "socket":
            env["SLACK_APP_TOKEN"] = slack.app_token
        service = await start_process(
            "-m", "bot", "serve", "--config", str(config_path),
            "--port", str(port), "--host", "127.0.0.1", env=env,
        )  # fmt: skip
        pin(service.pid, SERVICE_CPU)
        try:
            await wait_ready(f"http://127.0.0.1:{port}/readyz", time.monotonic() + 30)
            driver = SlackDriver(
                slack, bot_url=f"http://127.0.0.1:{port}/slack/events", signing_secret=secret
            )
            if mode == "socket":
                await driver.wait_socket_connected(timeout=30)
            burst = Burst(port, concurrency)
            if mode == "http":
                await burst.open()

            async def one_round() -> list[tuple[float, float]]:
                if mode == "http":
                    return await burst.round(driver, slack)
                return await asyncio.gather(
                    *(one_command(driver, slack, mode) for _ in range(concurrency))
                )

            results = await measured(one_round, rounds)
            acks = [a for a, _ in results]
            ends = [e for _, e in results]
            burst.close()
            await driver.aclose()
        finally:
            for process in (service, sim):
                process.terminate()
                await process.wait()
        floor = await bare_floor(driver, concurrency, rounds) if mode == "http" else []
    where = "HTTP mode" if mode == "http" else "Socket Mode"
    print(
        f"{where}: {concurrency} concurrent /kai health x {rounds} rounds ({len(acks)} commands), "
        "service and simulator in their own processes"
    )
    print(
        f"  ack      p50 {ms(percentile(acks, 0.5))}  p99 {ms(percentile(acks, 0.99))}"
        f"  max {ms(max(acks))}"
    )
    print(
        f"  reply    p50 {ms(percentile(ends, 0.5))}  p99 {ms(percentile(ends, 0.99))}"
        f"  max {ms(max(ends))}  mean {ms(statistics.mean(ends))}"
    )
    p99 = round(percentile(acks, 0.99) * 1000, 1)
    print(f"  {goal(f'{where} ack p99', p99, ACK_GOAL_MS)}")
    record(f"ack p99, {concurrency} concurrent, {where}", p99, ACK_GOAL_MS, "ms")
    if floor:
        bare = percentile(floor, 0.99)
        print(f"  a bare aiohttp server, the same bursts: ack p50 {ms(percentile(floor, 0.5))}"
              f"  p99 {ms(bare)}")  # fmt: skip
        ratio = round(p99 / (bare * 1000), 2)
        print(f"  {where} ack p99 vs the bare server: {ratio:g} x (no goal: what the service adds)")
        record(f"ack p99, {concurrency} concurrent, {where}, vs a bare aiohttp server", ratio,
               None, "x")  # fmt: skip


async def bare_floor(driver: SlackDriver, concurrency: int, rounds: int) -> list[float]:
    """Ack seconds of the same bursts against bench/bare_ack.py, on the service's CPU: what
    the server library and the loopback cost before the service does anything."""
    port = free_port()
    bare = await start_process(str(Path(__file__).with_name("bare_ack.py")), str(port))
    pin(bare.pid, SERVICE_CPU)
    try:
        assert bare.stdout is not None
        await bare.stdout.readline()
        burst = Burst(port, concurrency)
        await burst.open()
        acks = await measured(lambda: burst.bare_round(driver), rounds)
        burst.close()
        return acks
    finally:
        bare.terminate()
        await bare.wait()


async def request_counts(workdir: Path) -> None:
    async with running_stack(workdir) as stack:
        base = await requests_per_check(stack)
        grow_cluster(stack, shards=200, deployments=1000)
        grown = await requests_per_check(stack)
    print(
        f"  API requests per health check: {base} (default scenario), "
        f"{grown} (with 200 more shards and 1000 more Deployments)"
    )


async def main(concurrency: int, rounds: int) -> None:
    pin(0, BENCH_CPU)
    with tempfile.TemporaryDirectory() as workdir:
        for mode in ("http", "socket"):
            await latency(Path(workdir), concurrency, rounds, mode)
        await request_counts(Path(workdir))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.concurrency, args.rounds))
