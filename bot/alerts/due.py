"""When a cluster's alert state itself asks for its next check: a hold running out.

An alert is posted once its condition has held for `alerts.hold`, and resolved once it has been
clear for as long; a check exactly then, rather than an interval later, keeps the time to page
at `hold` whatever the interval. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.alerts.model import ClusterAlerts, Phase


def next_look(state: ClusterAlerts, hold: timedelta) -> datetime | None:
    """The soonest moment a pending alert's hold or a clearing alert's cool-down runs out;
    None when no alert is waiting for one."""
    moments = []
    for alert in state.alerts.values():
        if alert.phase is Phase.PENDING:
            moments.append(alert.first_seen + hold)
        elif alert.clear_since is not None and alert.is_active:
            moments.append(alert.clear_since + hold)
    return min(moments, default=None)
