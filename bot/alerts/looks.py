"""When to look at an incident's channel again: the drain's schedule of convergence reads.

A call may still land until some moment (`until`, monotonic seconds). Where none is known to
be on its way (a takeover: the deposed holder may have edited a root), the incident's channel
is looked at once now and once more when that moment has passed, and between the two nothing
is read again, however many drains run (a read that agreed is not repeated). Where a copy is
known to be on its way (a call whose answer never came, ours or another replica's), the look
is `eager`: at every drain until then, so a late copy is deleted as soon as it lands. A look
that had to repair something, or could not read Slack, is due again at the next drain. Pure:
no I/O, the time is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Look:
    """One incident's next look: due at `at`, and the last one due once `until` has passed."""

    at: float
    until: float
    channel: str = ""
    anchor: str = ""  # the oldest Slack ts its roots can have (the root's anchor)
    eager: bool = False  # a copy is on its way: look at every drain until `until`
    # The reads of the channel made before this look was set (`ChannelReads.reads`): only a
    # later one may serve it, even on a clock that stood still meanwhile.
    after_read: int = 0


@dataclass
class Looks:
    """The looks of one cluster's incidents. An incident that ever had a copy on its way
    (`uncertain`) is looked at eagerly whenever it is watched again: a late copy of it may
    land however late (its closing watches it once more)."""

    due_at: dict[str, Look] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)

    def watch(
        self,
        incidents: Iterable[tuple[str, str, str]],
        now: float,
        until: float,
        *,
        eager: bool = False,
        reads: int = 0,
    ) -> None:
        """Look at each (incident, channel, anchor) now and once `until` has passed, or at
        every drain until then when `eager` (a later `until`, and eagerness, win)."""
        for incident, channel, anchor in incidents:
            if eager:
                self.uncertain.add(incident)
            known = self.due_at.get(incident)
            last = until if known is None else max(known.until, until)
            keen = incident in self.uncertain
            self.due_at[incident] = Look(now, last, channel, anchor, keen, reads)

    def due(self, now: float) -> list[str]:
        """The incidents to look at now, in a stable order."""
        return sorted(i for i, look in self.due_at.items() if look.at <= now)

    def looked(self, incident: str, agreed: bool | None, now: float, *, reads: int = 0) -> None:
        """What a look saw (`reads`: the reads made so far): agreeing, the next is the last
        (at `until`), or none when that has passed; repaired or unreadable (None), or eager,
        due again at the next drain, on a read not made yet."""
        look = self.due_at.get(incident)
        if look is None:
            return
        if not agreed or (look.eager and now < look.until):
            self.due_at[incident] = replace(look, at=now, after_read=reads)
        elif now >= look.until:
            del self.due_at[incident]
        else:
            self.due_at[incident] = replace(look, at=look.until, after_read=reads)

    def forget(self, incident: str) -> None:
        """The incident is gone from the state: nothing more to look at."""
        self.due_at.pop(incident, None)
        self.uncertain.discard(incident)

    def oldest_anchor(self, channel: str, now: float) -> str | None:
        """The oldest anchor among the looks in `channel` due now (None: none is due), so one
        read of the channel serves them all."""
        anchors = [
            look.anchor
            for look in self.due_at.values()
            if look.channel == channel and look.at <= now
        ]
        if not anchors:
            return None
        return min(anchors, key=ts_order)

    def __bool__(self) -> bool:
        return bool(self.due_at)


def ts_order(ts: str) -> tuple[int, int]:
    """A Slack ts as a sortable pair ("" first: the whole channel)."""
    seconds, _, micros = ts.partition(".")
    return (int(seconds), int(micros)) if seconds.isdigit() and micros.isdigit() else (0, 0)
