"""Suite-wide rules: no real Slack token or kubeconfig can leak into a test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig-for-tests")
    yield
