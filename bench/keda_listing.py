"""Bench: `/kai scaledjobs --all-namespaces` over many ScaledJobs, and one pause end to end.

Runs the whole stack on loopback (simulator, Slack emulator, service), fills the simulator with
N ScaledJobs spread over M namespaces, and prints for the listing: reply time, peak traced memory
(tracemalloc, the whole in-process stack), Kubernetes API requests and their kinds. Then one
`/kai pause` from the command to KEDA's acknowledgement (a tiny fake KEDA in this script sets the
`Paused` condition once the annotation appears): time, requests, and the result line.

    .venv/bin/python bench/keda_listing.py [--jobs 2000] [--namespaces 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

from bot.slack import blocks as render
from testbed.stack import DEMO_CHANNEL, OPERATOR, Stack, running_stack

API = "keda.sh/v1alpha1"
PAUSED = "autoscaling.keda.sh/paused"


def scaled_job(namespace: str, name: str, index: int) -> dict[str, Any]:
    conditions = [
        {"type": "Ready", "status": "True", "reason": "ScaledJobReady", "message": "ready"},
        {"type": "Active", "status": "False", "reason": "ScalerNotActive", "message": "idle"},
        {"type": "Paused", "status": "False", "reason": "ScaledJobUnpaused", "message": "no"},
    ]
    if index % 97 == 0:  # a few broken ones, so the listing has something to show in full
        conditions[0] = {"type": "Ready", "status": "False", "reason": "TriggerError"}
    return {
        "apiVersion": API,
        "kind": "ScaledJob",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "pollingInterval": 30,
            "maxReplicaCount": 8,
            "jobTargetRef": {
                "template": {
                    "spec": {
                        "containers": [{"name": "w", "image": "registry.example.com/w:1.0"}],
                        "restartPolicy": "Never",
                    }
                }
            },
            "triggers": [{"type": "rabbitmq", "metadata": {"queueName": name, "value": "4"}}],
        },
        "status": {"conditions": conditions},
    }


def fill(stack: Stack, jobs: int, namespaces: int) -> None:
    for n in range(namespaces):
        name = f"team-{n:03}"
        stack.sim.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for i in range(jobs):
        stack.sim.apply(scaled_job(f"team-{i % namespaces:03}", f"job-{i:05}", i))


async def listing_round(stack: Stack, *, traced: bool) -> tuple[float, int, Counter[str], str]:
    """One listing: seconds, peak traced bytes (0 untraced), requests by kind, reply head."""
    stack.sim.clear_requests()
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    reply = await stack.command("scaledjobs --all-namespaces")
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    tracemalloc.stop()
    kinds = Counter(f"{r.verb} {r.resource} ns={r.namespace or '*'}" for r in stack.sim.requests)
    blocks = len((reply.message or {}).get("blocks") or [])
    head = "\n    ".join([*reply.text.splitlines()[:2], f"({blocks} blocks)"])
    return elapsed, peak, kinds, head


async def fake_keda(stack: Stack, namespace: str, name: str) -> float:
    """Set `Paused=True` as soon as the annotation appears; returns when it did."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while loop.time() < deadline:
        obj = stack.sim.get(API, "ScaledJob", name, namespace) or {}
        if (obj.get("metadata", {}).get("annotations") or {}).get(PAUSED) == "true":
            stack.sim.set_condition(
                API, "ScaledJob", name, namespace, "Paused", "True", "ScaledJobPaused", "paused"
            )
            return time.perf_counter()
        await asyncio.sleep(0.005)
    raise RuntimeError("the bot never wrote the pause annotation")


async def one_pause(stack: Stack) -> None:
    stack.sim.clear_requests()
    started = time.perf_counter()
    reply = await stack.command("pause annia/annia-worker for 2h bench")
    asked = time.perf_counter()
    keda = asyncio.create_task(fake_keda(stack, "annia", "annia-worker"))
    delivery = await stack.driver.click_button(
        render.CONFIRM_ACTION, user_id=OPERATOR, channel_id=DEMO_CHANNEL, message=reply.message
    )
    post = await stack.slack.wait_for_response(delivery.hook_id, timeout=30)
    done = time.perf_counter()
    acked_at = await keda
    kinds = Counter(f"{r.verb} {r.resource}" for r in stack.sim.requests)
    print("pause annia/annia-worker, command to KEDA-confirmed state:")
    print(f"  command -> confirmation shown      {(asked - started) * 1000:8.1f} ms")
    print(f"  Confirm click -> result posted     {(done - asked) * 1000:8.1f} ms")
    print(f"  of which KEDA ack -> bot saw it    {(done - acked_at) * 1000:8.1f} ms (watch)")
    print(f"  total                              {(done - started) * 1000:8.1f} ms")
    print(f"  API requests: {sum(kinds.values())} ({dict(kinds)})")
    print(f"  result: {post.body.get('text', '')[:160]}")


async def main(jobs: int, namespaces: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        async with running_stack(Path(workdir)) as stack:
            fill(stack, jobs, namespaces)
            print(f"/kai scaledjobs --all-namespaces: {jobs} ScaledJobs in {namespaces} namespaces")
            times = []
            for _ in range(rounds):
                elapsed, _, kinds, head = await listing_round(stack, traced=False)
                times.append(elapsed)
            shown = ", ".join(f"{t * 1000:.0f}" for t in times)
            print(f"  time: median {statistics.median(times) * 1000:.1f} ms ({shown} ms)")
            print(f"  API requests: {sum(kinds.values())} {dict(kinds)}")
            traced, peak, _, _ = await listing_round(stack, traced=True)
            print(
                f"  peak traced memory {peak / 2**20:.1f} MiB (whole in-process stack: simulator,"
            )
            print(f"    emulator and service; {traced * 1000:.0f} ms under tracemalloc)")
            print(f"  reply:\n    {head}")
            await one_pause(stack)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.jobs, args.namespaces, args.rounds))
