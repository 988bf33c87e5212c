"""Listeners for `/kai suspend KIND NS/NAME` and `/kai resume KIND NS/NAME` (Flux; docs/design.md
§1.3, 2).

Both are changes that ask Confirm (`bot.gitops.change_suspend`, through `bot.changes`);
`resume [scaledobject] NS/NAME` without a Flux KIND stays KEDA's (`handlers.keda`).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.gitops import change_suspend
from bot.gitops.commands import FluxResume, Suspend
from handlers.invocation import Runner, asking

RUNNERS: dict[type, Runner] = {
    Suspend: asking(change_suspend.SUSPEND, change_suspend.suspending),
    FluxResume: asking(change_suspend.FLUX_RESUME, change_suspend.resuming),
}


def register(app: AsyncApp) -> None:
    """No buttons of its own: Confirm and Cancel are shared (`handlers.confirm`)."""
