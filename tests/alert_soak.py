"""A seeded randomised soak of alert delivery that sees what people see in the channel.

Per seed: the whole stack (one replica, or two sharing a Lease), a Slack that randomly answers
429, fails with a 5xx before or after doing the call, drops the connection before or after
doing it, answers after the client gave up, or holds a write on the wire past the client's
timeout and carries it out later (after the Lease moved, often); an API server that randomly
fails reads; Lease holders that stop renewing (a failover), some with a post in flight;
replicas restarted, or killed while a post is on the wire. Some seeds keep the state in the
ConfigMap backend, whose writes are applied-then-answered-503 or meet 409 storms; some run
Slack's clock hours behind or ahead; some bury an alert's root or its latest reply under a
thousand messages of people talking while `conversations.history` is down (`SeedPlan`).

Each incident is broken (its page mentions the on-call group, its first reply is its diagnosis),
acknowledged now and then (a signed `/kai ack`), left unanswered long enough to escalate now and
then, and healed. Throughout, an observer on every applied Slack call watches the channel: two
roots of one incident visible at once (a page seen twice), a root shown resolved that later
shows firing (a lie), forgiven only when a late landing caused it and the next check step
repaired it (counted apart: "late landings shown for a step"); and the holder log flags any post
by a replica that did not hold the Lease still there at the end of the check step after the one
it landed in. Then faults stop, checks go on until nothing is owed, and the invariant checker
reads the final channel. One seed is `tests/alert_soak_seed.py`; seeds run side by side in
processes (`--jobs`). Run `python tests/alert_soak.py --seeds 1-20` (`make soak`); the suite
runs a few seeds (`tests/e2e/test_alert_soak.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from alert_chaos import Figures, SeedPlan
from alert_soak_seed import soak_seed

__all__ = ["SeedPlan", "main", "soak", "soak_seed"]


def one_seed(seed: int, incidents: int, log: str) -> Figures:
    """One seed in a process of its own (the soak waits on timeouts far more than it computes,
    so seeds run side by side)."""
    logging.basicConfig(filename=f"{log}.{seed}", filemode="w", level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(soak_seed(seed, Path(tmp), incidents))


def soak(seeds: list[int], incidents: int, *, jobs: int, log: str, verbose: bool) -> Figures:
    total = Figures()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = {seed: pool.submit(one_seed, seed, incidents, log) for seed in seeds}
        for seed, run in runs.items():
            figures = run.result()
            if verbose:
                print(f"seed {seed} ({SeedPlan(seed).describe()}): {figures.summary()}", flush=True)
            total.add(figures)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-20", help="a range like 1-20")
    parser.add_argument("--incidents", type=int, default=6, help="incidents per seed")
    parser.add_argument("--verbose", action="store_true", help="a line per seed as it ends")
    parser.add_argument("--jobs", type=int, default=10, help="seeds run side by side")
    parser.add_argument(
        "--log",
        default=str(Path(tempfile.gettempdir()) / "kai-chatops-soak.log"),
        help="where the service's log goes, one file per seed (LOG.SEED): the faults make it warn",
    )
    args = parser.parse_args()
    first, _, last = args.seeds.partition("-")
    seeds = list(range(int(first), int(last or first) + 1))
    started = time.monotonic()
    figures = soak(seeds, args.incidents, jobs=args.jobs, log=args.log, verbose=args.verbose)
    print(f"{figures.summary()} in {time.monotonic() - started:.0f}s (service logs: {args.log}.*)")
    for problem in figures.problems:
        print("  " + problem)
    sys.exit(1 if figures.failed else 0)


if __name__ == "__main__":
    main()
