"""`kai-chatops check` and `serve` start-up, run as a user would: a process, output, exit code."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from testbed.sim import Simulator, breakage
from testbed.stack import demo_config

pytestmark = pytest.mark.sim(scenarios=["default"])


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run `python -m bot ARGS` without blocking the loop that serves the simulator."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
def config_file(sim: Simulator, tmp_path: Path) -> str:
    kubeconfig = sim.write_kubeconfig(str(tmp_path / "kubeconfig"))
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(demo_config(kubeconfig)))
    return str(path)


async def test_check_of_a_healthy_cluster_exits_zero(config_file: str) -> None:
    code, out, _ = await run_cli("check", "--config", config_file)
    assert code == 0
    assert out.startswith("KAI health on sim: Healthy")


async def test_check_of_a_degraded_cluster_exits_one_with_the_operators_message(
    sim: Simulator, config_file: str
) -> None:
    breakage.dependencies_missing(sim)
    code, out, _ = await run_cli("check", "--config", config_file)
    assert code == 1
    assert "KAI-prometheus is missing prometheus operator" in out


async def test_check_as_json_lists_every_finding(sim: Simulator, config_file: str) -> None:
    breakage.apiservice_down(sim)
    code, out, _ = await run_cli("check", "--config", config_file, "--output", "json")
    report = json.loads(out)
    assert code == 1
    assert report["cluster"] == "sim"
    assert report["health"] == "Degraded"
    apiservice = [f for f in report["findings"] if f["subject"].startswith("APIService")]
    assert apiservice[0]["health"] == "Degraded"


async def test_check_of_an_unreachable_cluster_exits_two(sim: Simulator, config_file: str) -> None:
    await sim.stop()
    code, out, err = await run_cli("check", "--config", config_file)
    assert code == 2
    assert out == ""
    assert "cannot reach the API server" in err


@pytest.mark.parametrize(("verbose", "retries_shown"), [(False, False), (True, True)])
async def test_check_unreachable_keeps_retry_warnings_out_of_the_terminal_unless_verbose(
    sim: Simulator, config_file: str, verbose: bool, retries_shown: bool
) -> None:
    await sim.stop()
    flags = ["--verbose"] if verbose else []
    code, out, err = await run_cli("check", "--config", config_file, *flags)
    assert code == 2 and out == ""
    assert ("retrying in" in err) is retries_shown
    if not verbose:
        [line] = err.strip().splitlines()
        assert line.startswith("kai-chatops: cluster sim: cannot reach the API server")


async def test_check_of_a_cluster_nothing_listens_on_says_so_in_one_whole_line(
    tmp_path: Path,
) -> None:
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "prod", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "bot", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "bot"}}],
        "current-context": "prod",
    }
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    config = demo_config(str(tmp_path / "kubeconfig"), context="prod")
    config["clusters"][0]["name"] = "prod"
    config["kubernetes"]["retries"] = 0  # the words are the same after retries, which take time
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))

    code, out, err = await run_cli("check", "--config", str(tmp_path / "config.yaml"))

    assert code == 2 and out == ""
    [line] = err.splitlines()  # no urllib3 warning, no traceback: the one line
    assert line.startswith(
        "kai-chatops: cluster prod: cannot reach the API server at https://127.0.0.1:1: "
        "connection refused (to "
    )
    assert line.endswith(")") and "Errno" not in line and "urllib3" not in line


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ("clusters: []\nalerts: {interval: soon}\n", "invalid configuration"),
        (None, "unknown cluster 'nowhere'"),
    ],
    ids=["bad-config", "unknown-cluster"],
)
async def test_check_output_json_with_a_bad_config_prints_a_json_error_object(
    tmp_path: Path, config_file: str, config: str | None, error: str
) -> None:
    path = config_file
    if config is not None:
        bad = tmp_path / "bad.yaml"
        bad.write_text(config)
        path = str(bad)
    code, out, _ = await run_cli(
        "check", "--config", path, "--output", "json", "--cluster", "nowhere"
    )
    answer = json.loads(out)
    assert code == 2
    assert error in answer["error"]
    if config is not None:
        assert any(p.startswith("alerts.interval: 'soon'") for p in answer["problems"])


async def test_check_forbidden_by_rbac_exits_two_naming_the_permission(
    sim: Simulator, config_file: str
) -> None:
    sim.faults.add(403, resource="apiservices", times=None)
    code, _, err = await run_cli("check", "--config", config_file)
    assert code == 2
    assert "grant verb 'get' on resource 'apiservices'" in err


async def test_check_of_an_unknown_cluster_exits_two(config_file: str) -> None:
    code, _, err = await run_cli("check", "--config", config_file, "--cluster", "nowhere")
    assert code == 2
    assert "unknown cluster 'nowhere'" in err


async def test_an_invalid_config_is_refused_with_one_line_per_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("clusters: []\nalerts: {interval: soon}\nslak: {}\n")
    code, out, err = await run_cli("serve", "--config", str(path))
    assert code == 2
    assert out == ""
    problems = [line.strip() for line in err.splitlines()[1:]]
    assert len(problems) >= 3
    assert any(p.startswith("alerts.interval: 'soon'") for p in problems)
    assert any("slak" in p for p in problems)


async def test_serve_without_slack_tokens_says_which_are_missing(config_file: str) -> None:
    code, _, err = await run_cli("serve", "--config", config_file)
    assert code == 2
    assert "SLACK_BOT_TOKEN" in err
    assert "SLACK_SIGNING_SECRET" in err
