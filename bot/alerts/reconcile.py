"""After a takeover, an uncertain call or a closing: the channels of the incidents that may
disagree with the state are looked at again (`bot.alerts.converge`), on the schedule of
`bot.alerts.looks`: when this replica becomes the Lease holder, every open incident and those
closed within `settle` (a deposed replica's calls may land until then), now and once `settle`
has passed; an incident with a copy known to be on its way, at every drain until then. One
read of a channel serves every incident due a look at it, on every cluster. Looks are
convergence reads: they wait behind everything a person waits for (`bot.slack.budget`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.alerts import outbox
from bot.alerts.channel_reads import ChannelReads, Fresh
from bot.alerts.converge import Converger
from bot.alerts.looks import Looks, ts_order
from bot.alerts.model import ClusterAlerts
from bot.alerts.outbox import Place
from bot.slack import budget

if TYPE_CHECKING:  # the drain's Poster, which imports this module
    from bot.alerts.drain import Poster


@dataclass
class _Term:
    """One cluster's looks, and the holder term whose takeover looks were set."""

    term: int | None = None
    looks: Looks = field(default_factory=Looks)


class Reconciler:
    """The looks of every cluster of one drain."""

    def __init__(self, converger: Converger, channels: ChannelReads, poster: Poster) -> None:
        self._converger = converger
        self._channels = channels
        self._poster = poster
        self._clusters: defaultdict[str, _Term] = defaultdict(_Term)

    def is_due(self, cluster: str) -> bool:
        """Whether a drain of `cluster` has a look to make (a new holder term counts)."""
        known = self._clusters[cluster]
        if known.term != self._poster.term():
            return True
        return bool(known.looks.due(self._poster.monotonic()))

    async def reconcile(
        self, cluster: str, state: ClusterAlerts, give_way: Callable[[], bool] = lambda: False
    ) -> None:
        """Make the looks at `cluster`'s channels that are due (on the holder only); stop
        between two looks when `give_way` says a drain with something owed waits (the rest
        stay due: a page never waits behind a round of looks)."""
        if not self._poster.is_holder():
            return
        known, term = self._clusters[cluster], self._poster.term()
        if known.term != term:
            self.watch(cluster, _lately_live(state, self._poster.clock(), self._poster.settle))
            known.term = term
        now = self._poster.monotonic()
        with budget.urgency(budget.Priority.CONVERGE):
            for incident in known.looks.due(now):
                if give_way():
                    return
                await self._look(known.looks, state, incident, now)

    async def _look(self, looks: Looks, state: ClusterAlerts, incident: str, now: float) -> None:
        alert = outbox.find_known(state, incident)
        if alert is None:
            looks.forget(incident)
            return
        look = looks.due_at[incident]
        agreed = await self._converger.converge(
            alert,
            fresh=Fresh(look.at, look.after_read),
            scan_from=self._scan_from(look.channel, now),
        )
        looks.looked(incident, agreed, self._poster.monotonic(), reads=self._channels.reads)

    def _scan_from(self, channel: str, now: float) -> str | None:
        """The oldest anchor of the looks due now in `channel`, on every cluster: one read of
        the channel from there serves them all."""
        anchors = [t.looks.oldest_anchor(channel, now) for t in self._clusters.values()]
        known = [a for a in anchors if a is not None]
        return min(known, key=ts_order) if known else None

    def watch(
        self, cluster: str, places: Sequence[Place], *, eager: bool = False, ours: bool = False
    ) -> None:
        """Look at each incident's channel now and once a late call can no longer land (at
        every drain until then, when `eager`): `settle` from now, or, when the only call that
        may still land is one of this replica's (`ours`), its landing bound."""
        looks = [(p.incident, p.root_channel, p.root_anchor) for p in places if p.root_ts]
        self.watch_looks(cluster, looks, eager=eager, ours=ours)

    def watch_looks(
        self,
        cluster: str,
        looks: Sequence[tuple[str, str, str]],
        *,
        eager: bool = False,
        ours: bool = False,
    ) -> None:
        """`watch`, of (incident, channel, root anchor) triples."""
        now = self._poster.monotonic()
        late = self._poster.landing_bound if ours else self._poster.settle.total_seconds()
        reads = self._channels.reads
        self._clusters[cluster].looks.watch(looks, now, now + late, eager=eager, reads=reads)


LIVELY_AFTER_CLOSE = timedelta(minutes=5)  # a closed incident's calls end within this of it


def _lately_live(state: ClusterAlerts, now: datetime, settle: timedelta) -> list[Place]:
    """What a deposed holder may have been sending to: every open incident and reminder, the
    closing ones, those closed within `settle` (and the minutes a closing takes), and the
    lively notice threads. An incident closed long ago is not read again."""
    recent_since = now - settle - LIVELY_AFTER_CLOSE
    recent = [a for a in state.recent if a.resolved_at is None or a.resolved_at >= recent_since]
    places: list[Place] = [*state.alerts.values(), *state.reminders.values(), *state.closing]
    return [*places, *recent, *outbox.lively_threads(state, now)]
