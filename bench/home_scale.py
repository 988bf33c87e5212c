"""Bench: the Home tab's view at a fleet's size: build time, blocks and bytes (issue 36).

1 000 clusters, each with a dozen long findings and a starved queue, 200 alerts, 100 held
objects and ten recent changes: `bot.home.render.home_view` (what `views.publish` is sent) must
stay within Slack's 100 blocks and 250 kB, and build in well under a second (it runs on the
event loop, beside the acks).

    .venv/bin/python bench/home_scale.py [--clusters 1000] [--alerts 200] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime

from common import ms, percentile, record

from bot.core.models import Finding, Health, HealthReport
from bot.home.model import AlertLine, ChangeLine, ClusterStatus, HeldObject, Home, QueueMark
from bot.home.render import home_view
from bot.slack import limits

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)
GOAL_MS = 250.0


def fleet_home(clusters: int, alerts: int) -> Home:
    findings = tuple(
        Finding(f"Deployment kai-scheduler/operand-{n}", Health.DEGRADED, "0/1 available " * 16)
        for n in range(12)
    )
    starved = (QueueMark("research", "starved", "8", "8", "annia/pg-x for 45m"),)
    return Home(
        now=NOW,
        clusters=tuple(
            ClusterStatus(
                f"gpu-{n:04d}", HealthReport(f"gpu-{n:04d}", findings, NOW), queues=starved
            )
            for n in range(clusters)
        ),
        alerts=tuple(
            AlertLine(
                f"a{n:05d}",
                f"gpu-{n:04d}",
                n % 3 == 0,
                "Config kai-config",
                "x" * 200,
                "firing",
                NOW,
            )
            for n in range(alerts)
        ),
        held=tuple(
            HeldObject(
                "paused", "ScaledJob", "annia", f"job-{n}", "gpu-0001", "U0OP", "", "r" * 300
            )
            for n in range(100)
        ),
        changes=tuple(
            ChangeLine(NOW, "U0OP", "pause", f"ScaledJob annia/j{n} on gpu-0001", "ok", "drain")
            for n in range(10)
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--alerts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    home = fleet_home(args.clusters, args.alerts)
    took, view = [], {}
    for _ in range(args.rounds):
        started = time.perf_counter()
        view = home_view(home, "/kai")
        took.append(time.perf_counter() - started)
    size, blocks = len(json.dumps(view)), len(view["blocks"])  # type: ignore[arg-type]
    print(f"Home view of {args.clusters} clusters and {args.alerts} alerts, {args.rounds} rounds")
    print(f"  build: median {ms(statistics.median(took))}, p95 {ms(percentile(took, 0.95))}")
    print(f"  view: {blocks} blocks, {size} bytes; within Slack's limits: "
          f"{limits.check_view(view) == []}")  # fmt: skip
    p95 = percentile(took, 0.95) * 1000
    record(f"Home view build, {args.clusters} clusters, p95", round(p95, 1), GOAL_MS, "ms")
    record("Home view blocks", blocks, limits.MAX_VIEW_BLOCKS)
    record("Home view bytes", size, limits.MAX_VIEW_BYTES)


if __name__ == "__main__":
    main()
