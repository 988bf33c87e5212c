"""Fixtures of the end-to-end tier: the simulator reached through our Kubernetes gateway.

`gateway` connects the gateway to the module's `sim` fixture, over HTTP through the official
client, as the service does. Most modules choose their own simulator with a
`pytestmark = pytest.mark.sim(scenarios=[...], ...)` (the Simulator's options); the default `sim` is
a healthy KAI with KEDA (what the alert desk's tests break themselves), the default `store`
an alert state in a SQLite file of the test's own, and the default `stack` the whole service on
its demo config (`testbed.stack.running_stack`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import sim_gateway

from bot.alerts.store import SqliteStore
from bot.kube.gateway import KubeGateway
from testbed.sim import Simulator
from testbed.stack import Stack, running_stack


@pytest.fixture
def gateway(sim: Simulator, tmp_path: Path) -> Iterator[KubeGateway]:
    connected = sim_gateway.connect(sim, tmp_path)
    yield connected
    connected.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sim(**options): the `sim` fixture is Simulator(**options) in this module"
    )


@pytest.fixture
async def sim(request: pytest.FixtureRequest) -> AsyncIterator[Simulator]:
    marked = request.node.get_closest_marker("sim")
    options = {"scenarios": ["kai-healthy", "keda"]} if marked is None else marked.kwargs
    async with Simulator(**options) as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(str(tmp_path / "alerts.sqlite"))
    yield opened
    opened.close()


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path) as running:
        yield running
