"""The bot's service against the upstream tier: as the e2e tier runs it (the Slack emulator,
signed requests), with the kubeconfig of its own ServiceAccount on the tier's API server.

Alert checks are run by the tests (`alert_stack.check`) on a clock they move: the scheduled
interval is an hour, so no check runs behind a test's back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alert_stack import HOLD
from clocks import Clock
from controlplane import BOT_NAMESPACE, BOT_SERVICE_ACCOUNT

from testbed.stack import ServiceStack, running_service
from upstream.cluster import Upstream

# The context `ControlPlane.mint_bot_kubeconfig` writes: named after its user.
BOT_CONTEXT = f"system:serviceaccount:{BOT_NAMESPACE}:{BOT_SERVICE_ACCOUNT}"
ALERTS = {"hold": f"{HOLD}s", "interval": "1h", "repeat": "4h"}


@asynccontextmanager
async def serving(
    upstream: Upstream, workdir: Path, clock: Clock | None = None, **config: Any
) -> AsyncIterator[ServiceStack]:
    """The service with `config` over the defaults (`alerts`: ALERTS and what `config` adds)."""
    overrides = {
        "state": {"path": str(workdir / "state.sqlite")},
        **config,
        "alerts": {**ALERTS, **config.get("alerts", {})},
    }
    timing: dict[str, Any] = {} if clock is None else {"clock": clock, "monotonic": clock.monotonic}
    async with running_service(
        workdir,
        str(upstream.plane.bot_kubeconfig),
        context=BOT_CONTEXT,
        config_overrides=overrides,
        **timing,
    ) as served:
        yield served
