"""`make bench`: run every benchmark in bench/, then one table of every figure with a goal.

Each bench prints its own figures and, run from here, records those with a goal
(`common.record`); the table at the end lists them in the order below, goal, measured and
met/MISSED, with "not measured yet" for a figure no bench measures yet, and then any figure a
bench recorded that the list does not name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import FIGURES, compile_product

# (script, arguments). fleet_scale: 1, 200 and 1 000 clusters at the default interval, 30 s.
BENCHES = [
    ("startup.py", []),
    ("ack_latency.py", []),
    ("gateway_modes.py", []),
    ("keda_listing.py", []),
    ("reconcile_concurrency.py", []),
    ("follow_latency.py", []),
    ("alert_latency.py", []),
    ("alert_latency.py", ["--hold", "2", "--interval", "30", "--rounds", "10"]),
    ("workloads_scale.py", []),
    ("home_scale.py", []),
    ("fleet_scale.py", ["--clusters", "1", "200", "1000", "--interval", "30"]),
    # Issue 34: two replicas on ConfigMaps, Slack's tiers; ungrouped posts 1 000 roots and their
    # diagnoses at Slack's pace (about 35 minutes of the run).
    ("fleet_ha.py", []),
    # Issue 37: /kai timeline on 200 HelmReleases and 5 000 Events.
    ("timeline_scale.py", []),
]

# Issue 26's and issue 34's figures and goals, in the order the table prints them.
EXPECTED = [
    ("start-up: kai-chatops --help", "<= 0.25 s"),
    ("start-up: kai-chatops --version", "<= 0.25 s"),
    ("start-up: kai-chatops evaluate FILE", "<= 0.25 s"),
    ("start-up: serve ready, 1 cluster", "<= 0.8 s"),
    ("start-up: serve ready, 200 clusters", "<= 2 s"),
    ("ack p99, 50 concurrent, HTTP mode", "<= 10 ms"),
    ("ack p99, 50 concurrent, HTTP mode, vs a bare aiohttp server", ""),
    ("ack p99, 50 concurrent, Socket Mode", "<= 10 ms"),
    ("Flux reconcile followed by watch: write -> result posted, p99", "<= 100 ms"),
    ("KEDA pause followed by watch: write -> result posted, p99", "<= 100 ms"),
    ("idle RSS, 1 cluster", "<= 120 MB"),
    ("time to page p99, interval 30s, hold 2s", "<= 3 s"),
    ("time to page p99, interval 1s, hold 0s", "<= 1 s"),
    ("200 clusters: API requests per cluster per interval, at rest", "<= 1"),
    ("200 clusters: CPU per cluster per interval, at rest", "<= 2 ms"),
    ("200 clusters: threads", "<= 64"),
    ("200 clusters: RSS", "<= 150 MB"),
    ("200 clusters: every cluster checked within its interval", "all"),
    ("200 clusters: /kai health --cluster X p50 vs 1 cluster", "<= 1.5 x"),
    ("1000 clusters: threads", "<= 64"),
    ("1000 clusters: RSS", "<= 250 MB"),
    ("1000 clusters: ready", "<= 2 s"),
    ("1000 clusters: CPU at rest, % of one core", "<= 20 %"),
    ("1000 clusters: API requests per cluster per interval, at rest", "<= 1"),
    ("1000 clusters: CPU per cluster per interval, at rest", "<= 2 ms"),
    ("1000 clusters: every cluster checked within its interval", "all"),
    ("1000 clusters: /kai health --cluster X p50 vs 1 cluster", "<= 1.5 x"),
    # Issue 34: production shape (bench/fleet_ha.py, hold 5 s)
    ("1000 clusters on ConfigMaps at rest: RSS (holder)", "<= 250 MB"),
    ("1000 clusters on ConfigMaps at rest: CPU, % of one core (holder)", "<= 20 %"),
    ("1000 clusters on ConfigMaps at rest: API requests per cluster per interval", "<= 1"),
    ("1000 clusters failing, grouped: fleet root after the break", "<= 10 s"),
    ("1000 clusters failing, grouped: roots posted", "1"),
    ("1000 clusters failing, grouped: largest document, % of budget", "<= 80 %"),
    ("1000 clusters failing, grouped: 429s an hour", ""),
    ("1000 clusters failing, ungrouped: first root after the break", "<= 10 s"),
    ("1000 clusters failing, ungrouped: every root posted, none twice", "all, 0 twice"),
    ("1000 clusters failing, ungrouped: 429s an hour", ""),
    ("50 clusters x 300 eviction threads: a new page after its cause", "<= 10 s"),
    ("takeover, 50 open, 4 000 messages: a new page after its cause", "<= 10 s"),
    ("takeover, 50 open, 4 000 messages: its diagnosis after the cause", "<= 15 s"),
    ("takeover, 50 open, 4 000 messages: checks skipped", "<= 0"),
    ("takeover: Slack calls per open incident", "<= 2"),
    ("conversations.history failing: a new page after its cause", "<= 7 s"),
    ("a cause in the first interval after a start: paged after it, worst", "<= 8 s"),
    # Issue 37 (bench/timeline_scale.py)
    ("timeline, 200 HelmReleases + 5000 Events: ack, max", "<= 3 s"),
    ("timeline, 200 HelmReleases + 5000 Events: reply by response_url, max", "<= 3 s"),
    ("timeline, 200 HelmReleases + 5000 Events: extra API requests (vs demo cluster)", "<= 0"),
]


def table(recorded: list[dict[str, object]]) -> list[str]:
    """`figure | goal | measured | met/missed` rows: EXPECTED's order, then the rest."""
    by_figure = {str(row["figure"]): row for row in recorded}
    rows = []
    for figure, goal in EXPECTED:
        row = by_figure.pop(figure, None)
        if row is None:
            rows.append((figure, goal, "not measured yet", ""))
        else:
            rows.append((figure, str(row["goal"]), str(row["measured"]), verdict(row["met"])))
    for figure, row in by_figure.items():
        rows.append((figure, str(row["goal"]), str(row["measured"]), verdict(row["met"])))
    widths = [max(len(r[i]) for r in [("figure", "goal", "measured", "met/missed"), *rows])
              for i in range(4)]  # fmt: skip
    lines = []
    for i, r in enumerate([("figure", "goal", "measured", "met/missed"), *rows]):
        lines.append(" | ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("-|-".join("-" * w for w in widths))
    return lines


def verdict(met: object) -> str:
    return "" if met is None else "met" if met else "MISSED"


if __name__ == "__main__":
    here = Path(__file__).parent
    compile_product()
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "figures.jsonl"
        figures.touch()
        env = {**os.environ, FIGURES: str(figures)}
        for bench, args in BENCHES:
            print(f"== {bench} {' '.join(args)}".rstrip(), flush=True)
            subprocess.run([sys.executable, str(here / bench), *args], check=True, env=env)
        recorded = [json.loads(line) for line in figures.read_text().splitlines()]
    print("== every figure with its goal", flush=True)
    print("\n".join(table(recorded)))
