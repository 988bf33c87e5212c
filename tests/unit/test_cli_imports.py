"""The command line loads only what a command needs: `--help`, `--version` and the offline
`evaluate` answer at once because they import none of the service's libraries (about a second of
imports), `check` imports no Slack library, and `serve` is ready sooner because it leaves out
what serving does not need at start (parts of the Kubernetes client, croniter, Socket Mode)
and starts without the cyclic garbage collector. Each row runs the command in a fresh
interpreter and looks at `sys.modules` (or the collector) afterwards; no timing
(bench/startup.py times them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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

# `kai-chatops serve ARGS` with a `Service.start` that serves nothing (it would bind the port and
# connect): it notes what `serve` has imported by then and whether the cyclic garbage collector
# runs, then stops the service as SIGTERM does. Prints the exit code, that, and whether the
# collector runs after. Nothing is sent to the cluster or to Slack.
SERVE_PROBE = """
import gc, json, os, signal, sys
from bot.service import server

seen = {}

async def start_serving_nothing(service):
    seen.update(imported=sorted(sys.modules), collecting_at_start=gc.isenabled())
    os.kill(os.getpid(), signal.SIGTERM)

server.Service.start = start_serving_nothing
from bot.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "collecting": gc.isenabled(), **seen}), file=sys.stderr)
"""
KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {token: not-used}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""
# Not needed before the service is ready: the Kubernetes client's parts the gateway does not use
# (kubernetes/__init__.py would import them all, kubernetes_validate and jsonschema with them),
# croniter (Argo CD sync windows, when one is evaluated), Socket Mode (HTTP mode here).
NOT_AT_SERVE_START = (
    "kubernetes.dynamic",
    "kubernetes.stream",
    "kubernetes.watch",
    "kubernetes.leaderelection",
    "kubernetes.informer",
    "kubernetes_validate",
    "jsonschema",
    "websocket",
    "croniter",
    "slack_bolt.adapter.socket_mode",
    "slack_sdk.socket_mode",
)


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


def serve_until_it_would_listen(tmp_path: Path) -> dict[str, Any]:
    """`kai-chatops serve` with one cluster, HTTP mode, stopped where it would start serving."""
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    config = {
        "clusters": [{"name": "gpu", "kubeconfig": str(tmp_path / "kubeconfig")}],
        "slack": {"alert_channel": "C0123456789"},
        "access": {"operators": ["U0123ABCD"]},
        "state": {"path": str(tmp_path / "state.sqlite")},
    }
    (tmp_path / "config.yaml").write_text(json.dumps(config))  # YAML reads JSON
    env = {"SLACK_BOT_TOKEN": "xoxb-not-used", "SLACK_SIGNING_SECRET": "not-used"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE_PROBE, "serve", "--config", str(tmp_path / "config.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("SLACK_")} | env,
    )
    report: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return report


def test_serve_starts_without_what_serving_does_not_need_at_start(tmp_path: Path) -> None:
    imported = set(serve_until_it_would_listen(tmp_path)["imported"])
    # The row would pass for nothing if `serve` had stopped short of building the service.
    assert {"kubernetes.client.api_client", "kubernetes.config.kube_config"} <= imported
    assert {"slack_bolt.app.async_app", "aiohttp.web", "handlers"} <= imported
    loaded = {name for name in imported if name.startswith(NOT_AT_SERVE_START)}
    assert not loaded


def test_serve_collects_garbage_once_it_is_up_not_while_it_starts(tmp_path: Path) -> None:
    """Start-up's collections found next to nothing; a service that never collected again
    would grow without end."""
    report = serve_until_it_would_listen(tmp_path)
    assert report["collecting_at_start"] is False
    assert report["collecting"] is True
