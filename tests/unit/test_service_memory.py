"""Freed memory handed back to the system (bot/service/memory.py): a heap whose top is still in
use keeps what was freed below it until the service trims it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.service import memory

ROOT = Path(__file__).resolve().parents[2]

# Runs in a process of its own: the figures are that process's RSS, not this test run's.
FREE_THEN_TRIM = textwrap.dedent(
    """
    from bot.service import memory

    def rss_mb():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096 / 1e6

    memory.limit_arenas()
    blocks = [b"x" * (64 * 1024) for _ in range(1500)]  # about 100 MB on the heap
    top = blocks[-1]  # still in use: the heap cannot shrink from its top
    del blocks
    freed = rss_mb()
    memory.return_freed()
    print(freed, rss_mb())
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_memory_freed_below_the_top_of_the_heap_goes_back_to_the_system_when_trimmed() -> None:
    if not memory.limit_arenas():
        pytest.skip("not glibc: nothing to hand back this way")
    ran = subprocess.run(
        [sys.executable, "-c", FREE_THEN_TRIM],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    freed, trimmed = (float(f) for f in ran.stdout.split())
    assert freed - trimmed > 60, (freed, trimmed)  # most of the 100 MB freed left the RSS
