"""`kai-chatops demo --run`: the whole service against the simulated cluster, scripted."""

from __future__ import annotations

import subprocess
import sys


def test_the_demo_shows_health_break_and_heal_and_a_confirmed_pause() -> None:
    script = [
        "/kai health",
        "sim dependencies_missing",
        "/kai health",
        "sim heal",
        "/kai pause annia/annia-worker for 1h demo",
        "click Confirm",
    ]
    args = [arg for line in script for arg in ("--run", line)]
    done = subprocess.run(
        [sys.executable, "-m", "bot", "demo", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "kubectl --kubeconfig" in out
    healthy = out.index("== KAI health on sim: Healthy ==")
    degraded = out.index("== KAI health on sim: Degraded ==")
    assert healthy < degraded
    assert "KAI-prometheus is missing prometheus operator" in out[degraded:]
    assert "[Confirm] [Cancel]" in out
    assert "KEDA acknowledged" in out
