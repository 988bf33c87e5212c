"""Fixtures of the end-to-end tier: the simulator reached through our Kubernetes gateway.

`gateway` connects the gateway to the module's own `sim` fixture (each module chooses its
scenarios), over HTTP through the official client, as the service does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sim_gateway

from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator


@pytest.fixture
def gateway(sim: Simulator, tmp_path: Path) -> Iterator[KubeGateway]:
    connected = sim_gateway.connect(sim, tmp_path)
    yield connected
    connected.close()
