"""Every subcommand of the slash command, feature by feature: the table `GRAMMAR` reads, and
what the ack of `/kai TEXT` says (`acks`).

It imports each feature's `commands` module, so it sits above the features in the layers (the
shared grammar, `bot.commands`, sits below them and never imports one). Pure, as they are.
"""

from __future__ import annotations

from bot.alerts import commands as alerts
from bot.commands import approve
from bot.commands.registry import Grammar
from bot.diagnostics import commands as diagnostics
from bot.gitops import commands as gitops
from bot.health import commands as health
from bot.home import commands as home
from bot.keda import commands as keda
from bot.listing import commands as listing
from bot.nodes import commands as nodes
from bot.timeline import commands as timeline
from bot.workloads import commands as workloads

# The help opens with the commands that show the state of things; the rest follow in table order.
_HELP_FIRST = ("help", "health", "scaledjobs", "alerts")

# The subcommands that change something (docs/design.md §2 "Safety"): refused, not run, when
# whether the same signed request was already handled cannot be known.
CHANGES: frozenset[type] = frozenset(
    {
        keda.Pause,
        keda.Resume,
        gitops.Reconcile,
        gitops.ReconcileShortcut,
        gitops.Suspend,
        gitops.FluxResume,
        gitops.Sync,
        nodes.Cordon,
        nodes.Uncordon,
        alerts.Ack,
        alerts.Silence,
        alerts.Unsilence,
        approve.Approve,
    }
)

GRAMMAR = Grammar(
    (
        *health.SUBCOMMANDS,
        *keda.SUBCOMMANDS,
        *gitops.SUBCOMMANDS,
        *listing.SUBCOMMANDS,
        *diagnostics.SUBCOMMANDS,
        *workloads.SUBCOMMANDS,
        *nodes.SUBCOMMANDS,
        *alerts.SUBCOMMANDS,
        *home.SUBCOMMANDS,
        *timeline.SUBCOMMANDS,
        *approve.SUBCOMMANDS,
    ),
    extensions=gitops.EXTENSIONS,
    help_first=_HELP_FIRST,
)
