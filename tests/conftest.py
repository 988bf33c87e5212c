"""Suite-wide rules and shared fixtures.

No real Slack token or kubeconfig can leak into a test. `gateway` connects our Kubernetes gateway
to the module's own `sim` fixture (each module chooses its scenarios).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sim_gateway

from bot.kube.gateway import KubeGateway
from bot.sim import Simulator


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig-for-tests")
    yield


@pytest.fixture
def gateway(sim: Simulator, tmp_path: Path) -> Iterator[KubeGateway]:
    connected = sim_gateway.connect(sim, tmp_path)
    yield connected
    connected.close()
