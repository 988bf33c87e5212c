"""`kai-chatops demo --run`: the whole service against the simulated cluster, scripted."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import demo
from testbed.sim import breakage
from testbed.slackemu.records import PostedMessage
from testbed.stack import ALERT_CHANNEL, running_stack


def test_the_demo_shows_health_break_and_heal_and_a_confirmed_pause() -> None:
    script = [
        "/kai health",
        "sim dependencies_missing",
        "/kai health",
        "sim heal",
        "/kai pause annia/annia-worker for 1h demo",
        "click Confirm",
    ]
    out = run_demo(*script)
    assert "kubectl --kubeconfig" in out
    healthy = out.index("== KAI health on sim: Healthy ==")
    degraded = out.index("== KAI health on sim: Degraded ==")
    assert healthy < degraded
    assert "KAI-prometheus is missing prometheus operator" in out[degraded:]
    assert "[Confirm] [Cancel]" in out
    assert "KEDA acknowledged" in out


def test_demo_fleet_breaks_three_clusters_and_pages_once_with_one_root_listing_them() -> None:
    out = run_demo(
        "sim dependencies_missing",
        "wait for 3 clusters: sim, sim-2, sim-3 up to 1m",
        "wait for Diagnosis of kai on",
        "thread",
        fleet=3,
    )
    assert "*Clusters (3):* sim, sim-2, sim-3" in out and "Diagnosis of kai on" in out, out
    assert "*Cluster:* sim" not in out  # no cluster paged alone


def run_demo(*script: str, exit_code: int = 0, fleet: int = 0) -> str:
    args = [arg for line in script for arg in ("--run", line)]
    if fleet:
        args += ["--fleet", str(fleet)]
    done = subprocess.run(
        [sys.executable, "-m", "bot", "demo", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == exit_code, done.stderr
    return done.stdout + done.stderr


ROOT = Path(__file__).parents[2]
README_RUNNER = ".venv/bin/kai-chatops"


def readme_demo_command() -> str:
    """The README's scripted example, the line exactly as its quick start prints it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    quick_start = readme[start : readme.index("\n## ", start + 1)]
    [line] = [x for x in quick_start.splitlines() if x.startswith(f"{README_RUNNER} demo ")]
    return line


def test_the_readmes_scripted_example_pages_acknowledges_and_prints_the_whole_thread() -> None:
    line = readme_demo_command()
    script = shlex.split(line)[2:]
    assert script[::2] == ["--run"] * (len(script) // 2)
    assert "wait for [CRITICAL]" in script and "thread" in script
    # Run by the shell from the repository root, as a reader pastes it; where this test runs
    # outside the project's .venv, its own interpreter stands in for the entry point.
    runner = README_RUNNER
    if not (ROOT / README_RUNNER).is_file():
        runner = f"{shlex.quote(sys.executable)} -m bot"
    done = subprocess.run(
        ["/bin/sh", "-c", runner + line.removeprefix(README_RUNNER)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "(waiting up to 1m for '[CRITICAL]')" in out
    assert "Acknowledged alert" in out  # the click's reply
    thread = out[out.rindex("kai> thread") :]
    assert "(alert)" in thread and "APIService v1beta1.external.metrics.k8s.io is missing" in thread
    assert "(reply 1 of" in thread and "Diagnosis of keda on sim" in thread
    # whole messages, not first lines: the diagnosis's body is printed under its header
    assert "Gathered when the alert fired." in thread


@pytest.mark.parametrize(
    ("steps", "says"),
    [
        (["frobnicate"], "step 1 ('frobnicate') failed: unknown step"),
        (["sim no_such_action"], "step 1 ('sim no_such_action') failed: no simulator action"),
        (
            ["sim gpu_lost gpu-node-9"],
            "failed: gpu-node-9 is not a GPU node of the simulated cluster (GPU nodes: "
            "gpu-node-1, gpu-node-2)",
        ),
        (["sim starve now"], "step 1 ('sim starve now') failed: sim starve does not take 'now'"),
        (["/kai health", "click Acknowledge"], "step 2 ('click Acknowledge') failed: no button"),
        (
            ["wait for text nobody posts up to 1s"],
            "step 1 ('wait for text nobody posts up to 1s') failed: 'text nobody posts' was not"
            " posted within 1s",
        ),
    ],
    ids=[
        "unknown-step",
        "unknown-sim-action",
        "unknown-node",
        "sim-words-not-taken",
        "missing-button",
        "text-that-never-comes",
    ],
)
async def test_a_failing_step_exits_1_naming_it_and_runs_nothing_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], steps: list[str], says: str
) -> None:
    async with running_stack(tmp_path) as stack:
        code = await demo.run_steps(demo.Console(stack), [*steps, "sim heal"])
    out = capsys.readouterr()
    assert code == 1
    assert says in out.err
    assert "kai> sim heal" not in out.out


def test_a_failing_step_makes_the_demo_command_exit_1() -> None:
    out = run_demo("click Acknowledge", "/kai health", exit_code=1)
    assert "step 1 ('click Acknowledge') failed" in out
    assert "KAI health on sim" not in out


async def test_wait_for_returns_as_soon_as_the_text_is_posted_and_thread_shows_every_reply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast = {"alerts": {"interval": "1s", "hold": "0s", "repeat": "10m"}}
    async with running_stack(tmp_path, config_overrides=fast) as stack:
        console = demo.Console(stack)
        await console.execute("sim apiservice_missing")
        await console.execute("wait for Diagnosis of keda up to 2m")
        await console.execute("thread")
    out = capsys.readouterr().out
    thread = out[out.index("(alert)") :]
    assert "(reply 1 of 1)" in thread
    assert "Gathered when the alert fired." in thread


def test_demo_in_place_updates_are_not_ephemeral_and_channel_records_are_shown() -> None:
    out = run_demo(
        "/kai reconcile hr flux-system/kai-scheduler",
        "/kai pause annia/annia-worker for 1h demo",
        "click Confirm",
        "wait 1s",
    )
    updated = out.index("(updated in place)")
    assert out[updated:].splitlines()[1] == "(in_channel)"
    assert "[#demo]" in out and "paused ScaledJob annia/annia-worker" in out
    assert "(waiting 1s)" in out


def test_demo_home_prints_the_home_tab_with_a_suspend_and_the_change() -> None:
    out = run_demo(
        "/kai suspend hr flux-system/keda for 1h demo",
        "click Confirm",
        "home",
    )
    home = out[out.index("(Home tab)") :]
    assert "== Clusters ==" in home and "*sim*: Healthy" in home
    assert "HelmRelease flux-system/keda* on sim — suspended by" in home
    assert "suspend HelmRelease flux-system/keda on sim: ok — demo" in home
    assert "[Refresh]" in home


async def test_demo_alert_buttons_can_be_clicked_after_a_wait(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fast = {"alerts": {"interval": "1s", "hold": "1s", "repeat": "10m"}}
    async with running_stack(tmp_path, config_overrides=fast) as stack:
        console = demo.Console(stack)
        breakage.ACTIONS["apiservice_missing"](stack.sim)
        await stack.slack.wait_for_messages(ALERT_CHANNEL, count=1, timeout=15)
        await console.execute("wait 1s")
        await console.execute("click Acknowledge")
    out = capsys.readouterr().out
    assert "Acknowledged" in out
    assert "No button labelled" not in out


async def page_then_heal(tmp_path: Path, action: str) -> tuple[PostedMessage, PostedMessage]:
    """The demo's alerts (quicker): `action` typed in the console pages; its root and first
    reply once `sim heal` has resolved it."""
    fast = {**demo.DEMO_ALERTS["alerts"], "interval": "1s", "hold": "0s"}
    async with running_stack(tmp_path, config_overrides={"alerts": fast}) as stack:
        console = demo.Console(stack)
        await console.execute(action)
        [root] = await stack.slack.wait_for_messages(ALERT_CHANNEL, count=1, timeout=15)
        [first] = await stack.slack.wait_for_messages(
            ALERT_CHANNEL, thread_ts=root.ts, count=1, timeout=15
        )
        await console.execute("sim heal")
        await stack.slack.wait_for(
            lambda: stack.slack.message(ALERT_CHANNEL, root.ts).text.startswith("[RESOLVED"),
            timeout=15,
        )
    return root, first


async def test_demo_sim_scheduler_down_raises_a_paging_alert_with_evidence_and_heal_resolves_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, first = await page_then_heal(tmp_path, "sim scheduler_down")
    assert root.text.startswith("[CRITICAL] sim: Deployment kai-scheduler/kai-scheduler-default")
    assert root.text.endswith("<!subteam^S0ONCALL>")  # the demo pages the on-call group
    assert first.text.startswith("Diagnosis of kai-scheduler/kai-scheduler-default on sim")
    assert (
        "simulator: The kai-scheduler-default Deployment is unavailable" in capsys.readouterr().out
    )


def test_demo_sim_reclaim_shows_the_eviction_notice() -> None:
    out = run_demo("sim reclaim", "wait for KAI reclaimed up to 30s", "wait 1s")
    notice = out[out.index("simulator: Queue annia") :]
    assert "KAI reclaimed vision/pg-vision-sweep" in notice
    assert "Taken by: annia/pg-annia-train" in notice


# A `sim` action that raises one alert: what the root begins with, whether it pages the on-call
# group (critical only), what the first reply in its thread begins with, what the console said.
RAISED = [
    pytest.param(
        "sim starve",
        "[WARNING] sim: Queue vision Starved: queue vision starved: ",
        False,
        "Diagnosis of queue vision on sim: starved",
        "simulator: Queue vision starved",
        id="starve-queue-starvation-warning",
    ),
    pytest.param(
        "sim scheduler_stall",
        "[CRITICAL] sim: Deployment kai-scheduler/kai-scheduler-default Stalled: KAI scheduler "
        "kai-scheduler-default stalled: kai-scheduler-default-5b4c7d8f6-w4n6b has not renewed "
        "its Lease for 10m",
        True,
        "Diagnosis of kai-scheduler/kai-scheduler-default on sim",
        "simulator: KAI #1536: the default shard's scheduler stalls",
        id="scheduler_stall-pages-naming-the-lease-holder",
    ),
    pytest.param(
        "sim gpu_lost gpu-node-2",
        "[WARNING] sim: Node gpu-node-2 GPUs: GPU node gpu-node-2: 1 of 8 GPUs lost; "
        "GpuMemWatch True",
        False,
        "Node gpu-node-2 on sim now:",
        "simulator: A GPU node loses a GPU",
        id="gpu_lost-gpu-node-warning",
    ),
]


@pytest.mark.parametrize(("action", "titled", "pages", "first_reply", "console"), RAISED)
async def test_demo_sim_action_raises_its_alert_and_heal_resolves_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    action: str,
    titled: str,
    pages: bool,
    first_reply: str,
    console: str,
) -> None:
    root, first = await page_then_heal(tmp_path, action)
    assert root.text.startswith(titled), root.text
    assert ("<!subteam^S0ONCALL>" in root.text) is pages  # a warning pages nobody
    assert first.text.startswith(first_reply), first.text
    assert console in capsys.readouterr().out
