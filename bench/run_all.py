"""`make bench`: run every benchmark in bench/ and print their figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHES = [
    "ack_latency.py",
    "gateway_modes.py",
    "keda_listing.py",
    "reconcile_concurrency.py",
    "follow_latency.py",
    "alert_latency.py",
    "workloads_scale.py",
    "fleet_scale.py",
]

if __name__ == "__main__":
    here = Path(__file__).parent
    for bench in BENCHES:
        print(f"== {bench}", flush=True)
        subprocess.run([sys.executable, str(here / bench)], check=True)
