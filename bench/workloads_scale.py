"""Bench: `/kai diagnose` request count against pod count, and `/kai pending` over many PodGroups.

Runs the whole stack on loopback (simulator, Slack emulator, service). First a Deployment in
namespace annia with 5, then 500 pods (one crashing): `/kai diagnose annia/trainer` must make the
same number of Kubernetes API requests whatever the pod count (lists by selector, one log read).
Then N pending PodGroups over M namespaces (plus as many stale ones whose pods run):
`/kai pending --all-namespaces` reply time, and the reply's size against Slack's limits.

    .venv/bin/python bench/workloads_scale.py [--pods 5 500] [--groups 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.slack import limits
from testbed.sim.workload_breakage import crashing_deployment
from testbed.stack import Stack, running_stack

PODGROUP_API = "scheduling.run.ai/v2alpha2"


def podgroup(namespace: str, name: str, *, stale: bool) -> dict[str, Any]:
    reason = {
        "reason": "OverLimit",
        "message": f"{namespace} quota has reached the allowable limit of GPUs. Limit is 8 GPUs, "
        "currently 8 GPUs allocated and workload requested 4 GPUs",
        "details": {"queueDetails": {
            "name": namespace, "queueResourceLimits": {"nvidia.com/gpu": "8"},
            "queueAllocatedResources": {"nvidia.com/gpu": "8"},
            "podGroupRequestedResources": {"nvidia.com/gpu": "4"},
        }},
    }  # fmt: skip
    condition = {
        "type": "UnschedulableOnNodePool", "nodePool": "default", "reason": "Unschedulable",
        "status": "True", "transitionID": "1", "message": f"OverLimit: {reason['message']}.",
        "reasons": [reason], "lastTransitionTime": "2026-01-01T00:00:00Z",
    }  # fmt: skip
    resources: dict[str, Any] = {"requested": {"nvidia.com/gpu": "4"}}
    if stale:
        resources["allocated"] = {"nvidia.com/gpu": "4"}
    return {
        "apiVersion": PODGROUP_API,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": 1, "queue": namespace},
        "status": {"resourcesStatus": resources, "schedulingConditions": [condition]},
    }


async def bench_diagnose(stack: Stack, sizes: list[int]) -> None:
    print("diagnose annia/trainer: API requests by pods in the namespace")
    for pods in sizes:
        crashing_deployment(stack.sim, "annia", "trainer", pods)
        stack.sim.clear_requests()
        started = time.perf_counter()
        reply = await stack.command("diagnose annia/trainer")
        took = time.perf_counter() - started
        kinds = sorted({f"{r.verb} {r.resource}{'/' + r.subresource if r.subresource else ''}"
                        for r in stack.sim.requests})  # fmt: skip
        assert reply.message is not None and "OOMKilled" in reply.text
        print(f"  {pods:5d} pods: {len(stack.sim.requests)} requests ({', '.join(kinds)}), "
              f"reply {took * 1000:.0f} ms")  # fmt: skip


async def bench_pending(stack: Stack, groups: int, namespaces: int, rounds: int) -> None:
    for i in range(groups):
        namespace = f"team-{i % namespaces:03}"
        stack.sim.apply(podgroup(namespace, f"pg-job-{i:05}", stale=False))
        stack.sim.apply(podgroup(namespace, f"pg-done-{i:05}", stale=True))
    times = []
    reply = None
    for _ in range(rounds):
        started = time.perf_counter()
        reply = await stack.command("pending --all-namespaces")
        times.append(time.perf_counter() - started)
    assert reply is not None and reply.message is not None
    blocks = reply.message["blocks"]
    longest = max(len(b.get("text", {}).get("text", "")) for b in blocks)
    note = next((e["text"] for b in blocks[::-1] for e in b.get("elements", [])
                 if "not shown" in e["text"]), "nothing left out")  # fmt: skip
    print(f"pending --all-namespaces over {groups} pending + {groups} stale PodGroups "
          f"in {namespaces} namespaces:")  # fmt: skip
    median, worst = statistics.median(times) * 1000, max(times) * 1000
    print(f"  reply median {median:.0f} ms, max {worst:.0f} ms over {rounds} rounds")
    print(f"  {len(blocks)} blocks (Slack max {limits.MAX_BLOCKS}), longest section {longest} "
          f"chars (max {limits.MAX_SECTION_TEXT}), text {len(reply.text)} chars "
          f"(max {limits.MAX_MESSAGE_TEXT})")  # fmt: skip
    print(f"  {note}")


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="kai-chatops-bench-") as workdir:
        async with running_stack(Path(workdir)) as stack:
            await bench_diagnose(stack, args.pods)
            await bench_pending(stack, args.groups, args.namespaces, args.rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, nargs="+", default=[5, 500])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--namespaces", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
