"""Rules for every tier: no real Slack token or kubeconfig can leak into a test.

The tiers (docs/CONVENTIONS.md): `unit/` pure tables, no sockets; `e2e/` the service driven as Slack
drives it, against the Kubernetes API simulator and the Slack emulator on loopback; `cluster/` the
same service against a real kube-apiserver. Each test gets its tier's marker from its folder, so
`pytest -m unit` and `make test-unit` select the same tests. `clock` is the service's clock, moved
by the test (tests/clocks.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clocks import START, Clock

TIERS = ("unit", "e2e", "cluster")


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig-for-tests")
    yield


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "clock_from_now: the `clock` fixture starts at the real now, not clocks.START"
    )
    config.addinivalue_line(
        "markers", "clock_start(start): the `clock` fixture starts at `start`, not clocks.START"
    )


@pytest.fixture
def clock(request: pytest.FixtureRequest) -> Clock:
    """The service's clock for `running_stack(clock=..., monotonic=clock.monotonic)`."""
    if request.node.get_closest_marker("clock_from_now") is not None:
        return Clock()
    marked = request.node.get_closest_marker("clock_start")
    return Clock(START if marked is None else marked.args[0])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        tier = item.path.relative_to(root).parts[0]
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))
