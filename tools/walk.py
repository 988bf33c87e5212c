"""The walk of one `/kai pause`: which of our files it passes through, from Slack to the PATCH.

Runs the whole stack in this process (the simulator, the Slack emulator, the service), types
`/kai pause annia/annia-worker for 2h node drain`, clicks Confirm, and records every call into
`bot/` and `handlers/` (`sys.setprofile`, in every thread): the files from the request to the
Confirm question, and from the click to the PATCH (the gateway's `patch_object`), in order of
first visit, and every call that went back up: from a module into one of a higher layer
(`pyproject.toml`'s first import contract).

    .venv/bin/python tools/walk.py [pause|alert]

`alert` walks one alert instead: a check that finds `DependenciesFulfilled` False (hold 0 s),
to the root's post (the Slack gateway's `post`).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OURS = (str(ROOT / "bot") + "/", str(ROOT / "handlers") + "/")


# The layers of pyproject.toml's first import contract, top first, as path prefixes.
LAYERS = (
    ("bot/service/server.py", "bot/service/endpoint.py", "bot/service/app.py",
     "bot/service/probes.py", "bot/service/schedule.py", "bot/service/signing.py"),
    ("handlers/",),
    ("bot/service/",),
    ("bot/subcommands/",),
    ("bot/notices/", "bot/home/", "bot/listing/"),
    ("bot/changes/pipeline.py", "bot/changes/approval.py", "bot/changes/record.py",
     "bot/changes/progress.py", "bot/changes/registry.py", "bot/changes/ports.py",
     "bot/changes/render.py"),
    ("bot/alerts/", "bot/keda/", "bot/gitops/"),
    ("bot/diagnostics/", "bot/workloads/"),
    ("bot/health/",),
    ("bot/rules/",),
    ("bot/changes/",),
    ("bot/access/", "bot/commands/"),
    ("bot/state/",),
    ("bot/kube/", "bot/slack/"),
    ("bot/config/",),
    ("bot/core/",),
)  # fmt: skip


def layer(name: str) -> int:
    return next(i for i, prefixes in enumerate(LAYERS) if name.startswith(prefixes))


class Walk:
    """Our files as calls enter them, until `stop_at` (a file and function name) is called, and
    every call from a file into one of a higher layer (a callback handed down counts too)."""

    def __init__(self, stop_at: tuple[str, str] | None = None) -> None:
        self.files: list[str] = []
        self.up: list[tuple[str, str]] = []
        self.stop_at = stop_at
        self.done = False

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or self.done:
            return
        callee = frame.f_code.co_filename
        if not callee.startswith(OURS):
            return
        name = callee[len(str(ROOT)) + 1 :]
        if name not in self.files:
            self.files.append(name)
        caller = _our_caller(frame.f_back)
        callee = f"{name} {frame.f_code.co_name}"
        if caller and layer(name) < layer(caller) and (caller, callee) not in self.up:
            self.up.append((caller, callee))
        if self.stop_at == (name, frame.f_code.co_name):
            self.done = True


def _our_caller(frame: FrameType | None) -> str:
    while frame is not None:
        if frame.f_code.co_filename.startswith(OURS):
            return frame.f_code.co_filename[len(str(ROOT)) + 1 :]
        frame = frame.f_back
    return ""


def recording(walk: Walk) -> None:
    sys.setprofile(walk)
    threading.setprofile(walk)


def stop_recording() -> None:
    sys.setprofile(None)
    threading.setprofile(None)  # type: ignore[arg-type]


async def walk_pause() -> list[tuple[str, Walk]]:
    from testbed.stack import running_stack

    with tempfile.TemporaryDirectory() as tmp:
        async with running_stack(Path(tmp)) as stack:
            await stack.command("health")  # warm: imports and connections made before the walk
            asking = Walk()
            recording(asking)
            ask = await stack.command("pause annia/annia-worker for 2h node drain")
            stop_recording()
            assert ask.message is not None, ask.text
            confirming = Walk(stop_at=("bot/kube/gateway.py", "patch_object"))
            recording(confirming)
            await stack.click("Confirm", ask.message)
            stop_recording()
    return [("to the Confirm question", asking), ("from the click to the PATCH", confirming)]


async def walk_alert() -> list[tuple[str, Walk]]:
    """One check that finds `DependenciesFulfilled` False (hold 0 s) to the root's post."""
    import importlib

    from testbed.sim import breakage
    from testbed.stack import CLUSTER, running_stack

    jobs = importlib.import_module("bot.service.jobs_alerts")  # bot.service.schedule before
    overrides = {"alerts": {"hold": "0s"}}
    with tempfile.TemporaryDirectory() as tmp:
        async with running_stack(Path(tmp), config_overrides=overrides) as stack:
            await jobs.check_cluster(stack.service.deps, CLUSTER)  # warm, and nothing to page
            breakage.dependencies_missing(stack.sim)
            paging = Walk(stop_at=("bot/slack/gateway.py", "post"))
            recording(paging)
            await jobs.check_cluster(stack.service.deps, CLUSTER)
            await stack.service.deps.alerts.deliveries_done()
            stop_recording()
    return [("one alert, from its check to the root's post", paging)]


async def main(which: str) -> None:
    walks = await (walk_alert() if which == "alert" else walk_pause())
    for title, walk in walks:
        print(f"{title}: {len(walk.files)} files")
        for name in walk.files:
            print(f"  {name}")
        print(f"  calls into a higher layer: {len(walk.up)}")
        for caller, callee in walk.up:
            print(f"    {caller} -> {callee}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "pause"))
