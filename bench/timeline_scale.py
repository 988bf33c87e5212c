"""Bench: `/kai timeline` on a cluster with 200 HelmReleases and 5 000 Events (issue 37).

Runs the whole stack on loopback (simulator, Slack emulator, service): `/kai timeline` on the
demo cluster as it starts, then again once it holds `--releases` HelmReleases, each with a
release deployed in the last two hours in its `status.history`, and `--events` KAI Evict Events
of the last hour (the worst case: every one passes the field selector the timeline lists them
with, and is a line of the timeline). Prints, per round, the ack's latency (Slack wants it within
3 s), the time to the reply posted to the response_url, and the Kubernetes API requests the
command made, which must be the same on the small cluster and the large one.

    .venv/bin/python bench/timeline_scale.py [--releases 200] [--events 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import ms, record

from testbed.sim import evictions
from testbed.sim.objects import timestamp
from testbed.stack import Stack, running_stack

SLACK_ACK = 3.0  # seconds Slack waits for the ack of a slash command
HELM_API = "helm.toolkit.fluxcd.io/v2"


def helm_release(n: int, deployed: datetime) -> dict[str, Any]:
    """A HelmRelease whose history holds one upgrade deployed at `deployed` (helm-controller's
    `Snapshot`, api/v2/snapshot_types.go)."""
    snapshot = {
        "name": f"team-{n}", "namespace": "apps", "version": 2, "status": "deployed",
        "action": "upgrade", "chartName": "team", "chartVersion": f"1.{n}.0",
        "appVersion": "1.0.0", "configDigest": f"sha256:{n:064x}", "digest": f"sha256:{n:064x}",
        "firstDeployed": timestamp(deployed - timedelta(days=3)),
        "lastDeployed": timestamp(deployed),
    }  # fmt: skip
    return {
        "apiVersion": HELM_API,
        "kind": "HelmRelease",
        "metadata": {"name": f"team-{n}", "namespace": "flux-system"},
        "spec": {"chart": {"spec": {"chart": "team", "version": f"1.{n}.0"}}},
        "status": {"history": [snapshot]},
    }


def fill(stack: Stack, releases: int, events: int) -> None:
    now = datetime.now(UTC)
    for n in range(releases):
        stack.sim.apply(helm_release(n, now - timedelta(seconds=30 * n % 7200)))  # with status
    notes = evictions.kai_annotations("preempt", 1)
    for n in range(events):
        group = {"metadata": {"name": f"pg-{n}", "namespace": "vision", "uid": f"u{n}",
                              "resourceVersion": "1"}}  # fmt: skip
        at = now - timedelta(seconds=(n * 0.7) % 3500)
        stack.sim.apply(evictions.evict_event(group, "preempted", notes, at))


async def rounds(stack: Stack, count: int) -> tuple[list[float], list[float], list[int], Any]:
    """`/kai timeline` `count` times: ack latencies, reply times, API requests, the last reply."""
    acks, replies, requests = [], [], []
    reply = None
    for _ in range(count):
        before = len(stack.sim.requests)
        started = time.perf_counter()
        reply = await stack.command("timeline")
        replies.append(time.perf_counter() - started)
        acks.append(reply.delivery.latency)
        requests.append(len(stack.sim.requests) - before)
        assert reply.message is not None, reply.text
    return acks, replies, requests, reply


def made(stack: Stack, last: int) -> str:
    kinds = Counter(f"{r.verb} {r.resource}" for r in stack.sim.requests[-last:])
    return ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="kai-chatops-bench-") as workdir:
        async with running_stack(Path(workdir)) as stack:
            _, _, small, _ = await rounds(stack, 2)
            print(f"/kai timeline on the demo cluster: {small[-1]} API requests "
                  f"({made(stack, small[-1])})")  # fmt: skip
            fill(stack, args.releases, args.events)
            acks, replies, large, reply = await rounds(stack, args.rounds)
    size = f"{args.releases} HelmReleases + {args.events} Events"
    print(f"/kai timeline with {size}, {args.rounds} rounds:")
    print(f"  ack: max {ms(max(acks)).strip()} (Slack: within {SLACK_ACK:g} s)")
    print(f"  reply by response_url: max {ms(max(replies)).strip()}")
    print(f"  API requests per command: {sorted(set(large))} (demo cluster: {small[-1]})")
    print(f"  reply: {reply.text}")
    record(f"timeline, {size}: ack, max", round(max(acks), 3), SLACK_ACK, "s")
    record(f"timeline, {size}: reply by response_url, max", round(max(replies), 2), SLACK_ACK, "s")
    record(f"timeline, {size}: extra API requests (vs demo cluster)",
           max(large) - small[-1], 0)  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
