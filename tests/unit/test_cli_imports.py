"""The command line loads only what a command needs: `--help`, `--version` and the offline
`evaluate` answer at once because they import none of the service's libraries (about a second of
imports), and `check` imports no Slack library. Each row runs the command in a fresh interpreter
and looks at `sys.modules` afterwards; no timing (bench/startup.py times them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SERVICE_LIBRARIES = frozenset({"kubernetes", "aiohttp", "slack_sdk", "slack_bolt", "uvloop"})
SLACK_LIBRARIES = frozenset({"aiohttp", "slack_sdk", "slack_bolt"})

# Runs `kai-chatops ARGS` as the console script does, then prints its exit code and the top-level
# packages it imported as the last line of stderr.
PROBE = """
import json, sys
from bot.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
top = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"code": code, "imported": top}), file=sys.stderr)
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: kai-scheduler-default, namespace: kai-scheduler}
spec: {replicas: 1}
"""
KAI_CONFIG = """\
apiVersion: kai.scheduler/v1
kind: Config
metadata: {name: kai-config}
"""


def run(args: list[str]) -> tuple[object, set[str], str]:
    """(exit code, top-level packages imported, stdout) of `kai-chatops ARGS`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["imported"]), done.stdout


@pytest.fixture
def dumps(tmp_path: Path) -> list[str]:
    (tmp_path / "deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "config.yaml").write_text(KAI_CONFIG)
    return [str(tmp_path / "deployment.yaml"), str(tmp_path / "config.yaml")]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--help"], "usage: kai-chatops"),
        (["--version"], "kai-chatops "),
        (["serve", "--help"], "--config PATH"),
        (["evaluate", "--help"], "FILE"),
    ],
)
def test_help_and_version_import_no_service_library(args: list[str], says: str) -> None:
    code, imported, out = run(args)
    assert code == 0
    assert says in out
    assert not imported & SERVICE_LIBRARIES


@pytest.mark.parametrize("output", ["text", "json"])
def test_evaluate_is_offline_and_imports_no_service_library(dumps: list[str], output: str) -> None:
    code, imported, out = run(["evaluate", "--output", output, *dumps])
    assert code == 0
    assert "kai-scheduler-default" in out and "kai-config" in out
    assert not imported & SERVICE_LIBRARIES


def test_check_imports_no_slack_library(tmp_path: Path) -> None:
    code, imported, _ = run(["check", "--config", str(tmp_path / "absent.yaml")])
    assert code == 2  # the configuration is not there: it got as far as reading it
    assert "kubernetes" in imported  # the row would pass for nothing if `check` loaded nothing
    assert not imported & SLACK_LIBRARIES


def test_the_service_loads_socket_mode_only_when_it_uses_it() -> None:
    """HTTP mode (`POST /slack/events`) starts without Bolt's Socket Mode adapter."""
    code = "import sys, bot.service.server; print([m for m in sys.modules if 'socket_mode' in m])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"
