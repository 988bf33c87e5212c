"""Listeners for `/kai reconcile` (Flux reconcile, Argo CD refresh) and `/kai sync` (Argo CD).

Both are changes (`bot.gitops.change`, through `bot.changes`): a reconcile is made at once and
answered in place through the invocation's `respond`, a sync asks Confirm.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.gitops import change
from bot.gitops.commands import Reconcile, ReconcileShortcut, Sync
from handlers.invocation import Runner, asking

RUNNERS: dict[type, Runner] = {
    Reconcile: asking(change.RECONCILE, change.reconciling),
    ReconcileShortcut: asking(change.RECONCILE, change.reconciling),
    Sync: asking(change.SYNC, change.syncing),
}


def register(app: AsyncApp) -> None:
    """No buttons of its own: sync's Confirm is the shared one (`handlers.confirm`)."""
