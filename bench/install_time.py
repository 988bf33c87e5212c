"""The first install, timed: `make demo` to the console's prompt and `make test`'s Python install,
each from a fresh clone with no .venv (issue 38).

    .venv/bin/python bench/install_time.py [--ref HEAD] [--cache empty warm]

Each round clones REF (its commits: work not committed is not measured) into a temporary
directory and times, with make's own output shown:

- `make demo` until the console prints its prompt (`kai> `), split into the install (until make
  starts `kai-chatops demo`) and the demo's start-up; then `quit`;
- in the same clone, `make .venv/.installed-stamp`: what `make test` installs after `make demo`;
- in a second fresh clone, `make .venv/.installed-stamp`: `make test`'s Python install from
  nothing, as CI does it (the lint and the tests themselves are not timed).

`empty`: uv's and pip's download caches point at a new temporary directory; `warm`: at the same
directory again, filled by the empty round (your own caches are neither read nor written). Each
figure is wall time and the CPU seconds the processes used: on a busy machine the CPU is the
steadier figure. `--ref main` measures main's Makefile the same way.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import record

ROOT = Path(__file__).resolve().parent.parent
PROMPT = b"kai> "
DEMO_START = b"kai-chatops demo\n"  # the line make echoes before it starts the demo
STEP_TIMEOUT_S = 900.0
DEMO_GOAL_S = 60.0
TEST_INSTALL_GOAL_S = 90.0


@dataclass
class Timed:
    wall_s: float
    cpu_s: float
    until_demo_s: float | None = None  # `make demo`: when make started the demo

    def __str__(self) -> str:
        return f"{self.wall_s:.1f} s ({self.cpu_s:.1f} s of CPU)"


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def clean_env(cache: Path) -> dict[str, str]:
    """Ours, less any virtualenv we run in, with uv's and pip's caches in `cache`."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    env["UV_CACHE_DIR"] = str(cache / "uv")
    env["PIP_CACHE_DIR"] = str(cache / "pip")
    return env


def fresh_clone(ref: str, into: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", ref], check=True)
    return into


def make_demo_to_prompt(clone: Path, env: dict[str, str]) -> Timed:
    """`make demo` until its prompt, then `quit`; output echoed as it comes."""
    cpu, started = children_cpu(), time.monotonic()
    demo = subprocess.Popen(
        ["make", "demo"], cwd=clone, env=env, start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert demo.stdin is not None and demo.stdout is not None
    seen, demo_at, prompt_at = b"", None, None
    while prompt_at is None:
        chunk = demo.stdout.read1(65536)
        if not chunk or time.monotonic() - started > STEP_TIMEOUT_S:
            os.killpg(demo.pid, signal.SIGKILL)
            raise SystemExit(f"make demo ended or stalled before its prompt:\n{seen.decode()}")
        sys.stdout.write(chunk.decode(errors="replace"))
        seen += chunk
        if demo_at is None and DEMO_START in seen:
            demo_at = time.monotonic() - started
        if PROMPT in seen:
            prompt_at = time.monotonic() - started
    demo.stdin.write(b"quit\n")
    demo.stdin.close()
    demo.stdout.read()
    demo.wait(timeout=60)
    print()
    return Timed(prompt_at, children_cpu() - cpu, demo_at)


def make_target(clone: Path, env: dict[str, str], target: str) -> Timed:
    cpu, started = children_cpu(), time.monotonic()
    subprocess.run(["make", target], cwd=clone, env=env, check=True, timeout=STEP_TIMEOUT_S)
    return Timed(time.monotonic() - started, children_cpu() - cpu)


def one_round(ref: str, label: str, caches: tuple[Path, Path], work: Path) -> None:
    """`make demo`, then `make test`'s install in that clone, with the first cache; `make
    test`'s install in a second clone with the second cache."""
    env = clean_env(caches[0])
    print(f"== {label} cache: make demo in a fresh clone of {ref}", flush=True)
    clone = fresh_clone(ref, work / f"demo-{label}")
    demo = make_demo_to_prompt(clone, env)
    print(f"== {label} cache: make test's install after make demo", flush=True)
    extras = make_target(clone, env, ".venv/.installed-stamp")
    print(f"== {label} cache: make test's install in a fresh clone of {ref}", flush=True)
    test_clone = fresh_clone(ref, work / f"test-{label}")
    test = make_target(test_clone, clean_env(caches[1]), ".venv/.installed-stamp")
    until_demo = demo.until_demo_s or 0.0
    print(f"-- {label} cache, on {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}:")
    print(f"make demo to the prompt: {demo} (goal <= {DEMO_GOAL_S:g} s: {met(demo, DEMO_GOAL_S)})")
    print(
        f"    its install {until_demo:.1f} s, the demo's start-up {demo.wall_s - until_demo:.1f} s"
    )
    print(f"make test's install after make demo: {extras}")
    print(
        f"make test's install, fresh clone: {test}"
        f" (goal <= {TEST_INSTALL_GOAL_S:g} s: {met(test, TEST_INSTALL_GOAL_S)})",
        flush=True,
    )
    record(f"make demo to the prompt, fresh clone, {label} cache", demo.wall_s, DEMO_GOAL_S, "s")
    record(
        f"make test's install, fresh clone, {label} cache", test.wall_s, TEST_INSTALL_GOAL_S, "s"
    )


def met(timed: Timed, goal_s: float) -> str:
    return "met" if timed.wall_s <= goal_s else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--cache", nargs="+", choices=["empty", "warm"], default=["empty", "warm"])
    args = parser.parse_args()
    ref = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.ref],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kai-chatops-install-") as tmp:
        work, filled = Path(tmp), Path(tmp) / "cache-filled"
        if "empty" in args.cache:  # the demo's round fills `filled` with all `make test` needs
            one_round(ref, "empty", (filled, work / "cache-empty"), work)
        else:
            print("== filling a cache: make test's install in a fresh clone", flush=True)
            make_target(
                fresh_clone(ref, work / "fill"), clean_env(filled), ".venv/.installed-stamp"
            )
        if "warm" in args.cache:
            one_round(ref, "warm", (filled, filled), work)


if __name__ == "__main__":
    main()
