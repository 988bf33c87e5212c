"""The real Alertmanager (github.com/prometheus/alertmanager, the version build/alertmanager/
go.mod pins), built by cluster_build.py and run on loopback for the tests of the bot's webhook
and silences: one process per test module, its route pointed at the service under test by
rewriting its configuration and reloading it (`POST /-/reload`), so each test's service (on a
port of its own) gets the notifications without a new Alertmanager.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import cluster_build as build

# Short timers so a group's notifications come within a second: the first after `group_wait`,
# the next ones (an alert joining, resolving) after `group_interval`.
CONFIG = """\
route:
  receiver: kai-chatops
  group_by: [alertname]
  group_wait: 100ms
  group_interval: 500ms
  repeat_interval: 1h
receivers:
  - name: kai-chatops
    webhook_configs:
      - url: {url}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: {token}
"""


def binary() -> Path:
    """The cached binary, built first when missing (minutes on a new machine)."""
    (wanted,) = [b for b in build.BINARIES if b.name == "alertmanager"]
    if not wanted.path().is_file():
        build.build(["alertmanager"])
    return wanted.path()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Alertmanager:
    """One Alertmanager process; `route_to` points its webhook at a service, `post_alerts` and
    `silences` use its API v2."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "alertmanager.yml"
        self.config.write_text(CONFIG.format(url="http://127.0.0.1:9/", token="none"))
        self.log = (workdir / "alertmanager.log").open("wb")
        self.process = subprocess.Popen(
            [
                str(binary()),
                f"--config.file={self.config}",
                f"--storage.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",  # one instance: no gossip port
                "--log.level=debug",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready()

    def _wait_ready(self, seconds: float = 30.0) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"alertmanager exited; see {self.workdir / 'alertmanager.log'}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        raise TimeoutError(f"alertmanager not ready within {seconds}s")

    def route_to(self, webhook_url: str, token: str) -> None:
        """Send every group's notifications to `webhook_url` with `token` from now on."""
        self.config.write_text(CONFIG.format(url=webhook_url, token=token))
        self.call("POST", "/-/reload")

    def post_alerts(self, *alerts: dict[str, Any]) -> None:
        """`POST /api/v2/alerts`, as Prometheus sends them."""
        self.call("POST", "/api/v2/alerts", list(alerts))

    def silences(self) -> list[dict[str, Any]]:
        """`GET /api/v2/silences`: every silence it holds."""
        found: list[dict[str, Any]] = self.call("GET", "/api/v2/silences")
        return found

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            text = answer.read()
        return json.loads(text) if text.strip().startswith((b"[", b"{")) else None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
