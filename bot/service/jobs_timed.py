"""The timed-change jobs: timed KEDA pauses and timed Flux suspends resumed, timed node cordons
lifted, when due.

Each cluster's expiry (`PauseExpiry`) sweeps hourly, and at once where the change journal tells
of a change; between sweeps one tick for the whole fleet (`TimedChanges`) only compares the
soonest known due time (a timed change's end, or a reminder) with the clock.
`bot.service.schedule` runs the tick; the sweeps are `bot.keda.expiry` and
`bot.gitops.suspend_expiry`, which remind of pauses without an end too, and `bot.nodes.expiry`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

from bot.access.audit import Change
from bot.gitops import suspend_expiry
from bot.keda import expiry as keda_expiry
from bot.kube import threads
from bot.kube.ports import KubeWriter
from bot.nodes import expiry as node_expiry
from bot.service.deps import Deps
from bot.service.jobs_alerts import is_leader
from bot.state.retry import StateUnavailable

log = logging.getLogger(__name__)

# One pass of a timed-change job on one cluster (reading through the kube given, when one is):
# act on what is due, say when the next is due.
Sweeper = Callable[[Deps, str, KubeWriter | None], Awaitable[datetime | None]]
# Every timed pause and suspend is listed this often, a safety net: the journal tells of those
# made through the bot (`JOURNAL_LOOK`), and each sweep remembers when the next one it saw is due.
# Only one written by hand (kubectl) waits for this sweep (a reminder, once a sweep saw what it
# is of, comes at its time: the sweep names it as due). A list per cluster and kind each
# interval cost a fleet of 1 000 clusters seven requests per cluster per interval; a watch per
# kind, 7 000 connections.
PAUSE_SWEEP_EVERY = timedelta(hours=1)
FIRST_SWEEPS_WITHIN = timedelta(seconds=30)  # after the start, spread over the fleet
# How often the Lease holder reads the change journal (one read for the whole fleet): a pause,
# resume or suspend made through any replica has its cluster swept at once, which learns its end
# (one made through this replica is looked for at the next tick: `ChangeJournal.added`).
JOURNAL_LOOK = timedelta(seconds=30)
JOURNAL_WINDOW = 50  # the newest entries read at each look (the journal keeps 50)
TIMED_ACTIONS = frozenset({"pause", "resume", "suspend", "cordon", "uncordon"})


async def resume_expired_pauses(deps: Deps, cluster: str) -> None:
    """Timed pauses (`/kai pause ... for 2h`) whose time is up, on the Lease holder only."""
    if not is_leader(deps):
        return
    kube = deps.kube[cluster]
    await keda_expiry.resume_expired_pauses(
        kube, deps.slack, deps.settings, deps.clock(), journal=deps.journal
    )


async def sweep_pauses(deps: Deps, cluster: str, kube: KubeWriter | None = None) -> datetime | None:
    """Resume the timed KEDA pauses that are due, and remind of those without an end (from
    the same lists); when the next timed one or the next reminder is due."""
    kube, now = kube or deps.kube[cluster], deps.clock()
    swept = await keda_expiry.sweep(kube, deps.slack, deps.settings, now, journal=deps.journal)
    reminder = await deps.alerts.remind(cluster, swept.held, swept.listed, now)
    return soonest(swept.next_due, reminder)


async def sweep_suspends(
    deps: Deps, cluster: str, kube: KubeWriter | None = None
) -> datetime | None:
    """Resume (and reconcile) the timed Flux suspends that are due, and remind of those
    without an end (from the same lists); when the next timed one or the next reminder is due."""
    kube, now = kube or deps.kube[cluster], deps.clock()
    swept = await suspend_expiry.sweep(kube, deps.slack, deps.settings, now, journal=deps.journal)
    reminder = await deps.alerts.remind(cluster, swept.held, swept.listed, now)
    return soonest(swept.next_due, reminder)


def soonest(*moments: datetime | None) -> datetime | None:
    """The earliest of the moments given (None: none is)."""
    return min((m for m in moments if m is not None), default=None)


async def sweep_cordons(
    deps: Deps, cluster: str, kube: KubeWriter | None = None
) -> datetime | None:
    """Uncordon the timed node cordons that are due; when the next one is due."""
    kube, channel = kube or deps.kube[cluster], deps.settings.slack.alert_channel
    swept = await node_expiry.sweep(kube, deps.slack, channel, deps.clock(), journal=deps.journal)
    return swept.next_due


class PauseExpiry:
    """The timed-pause job of one cluster (leader only): every `sweep_every` (and when told a
    change was made, `sweep_soon`) it lists the timed pauses, resumes those due and remembers
    when the next one is due; every tick in between it only compares that time with the clock,
    so a pause `for 1m` resumes within a tick of its time, and the API is listed only when
    something may have changed. With `sweep=sweep_suspends` it does the same for timed Flux
    suspends.

    The sweep cadence is the event loop's monotonic time (the first sweep `first_sweep_after`
    the start); due times are the service's `deps.clock`.
    """

    def __init__(
        self,
        cluster: str,
        *,
        sweep_every: timedelta = PAUSE_SWEEP_EVERY,
        first_sweep_after: timedelta = FIRST_SWEEPS_WITHIN,
        sweep: Sweeper = sweep_pauses,
    ) -> None:
        self.cluster = cluster
        self.sweep = sweep
        self.sweep_every = sweep_every.total_seconds()
        self.first_sweep_after = first_sweep_after.total_seconds()
        self.next_sweep: float | None = None
        self.next_due: datetime | None = None

    async def __call__(self, deps: Deps) -> None:
        if self.wants_to_sweep(deps):
            await self.run(deps)

    def wants_to_sweep(self, deps: Deps) -> bool:
        """Whether a sweep is due (its cadence, or the soonest known due time); no I/O."""
        if not is_leader(deps):
            self.next_due = None
            return False
        moment = asyncio.get_running_loop().time()
        if self.next_sweep is None:
            self.next_sweep = moment + self.first_sweep_after
        is_due = self.next_due is not None and deps.clock() >= self.next_due
        return is_due or moment >= self.next_sweep

    def sweep_soon(self) -> None:
        """A change was made on this cluster: sweep at the next tick (and learn its end)."""
        self.next_sweep = asyncio.get_running_loop().time()

    async def run(self, deps: Deps) -> None:
        self.next_sweep = asyncio.get_running_loop().time() + self.sweep_every
        with threads.scheduled():
            self.next_due = await self.sweep(deps, self.cluster, None)
        # Its lists are the cluster's only requests for an hour (the checks read watched
        # copies): the connections they opened would sit idle, each holding its last answer.
        release = getattr(deps.kube.get(self.cluster), "close_idle_connections", None)
        if release is not None:
            release()


class TimedChanges:
    """Every cluster's timed-pause and timed-suspend expiries (`PauseExpiry`) on one tick: a
    tick only compares times, a few microseconds per cluster (a job per cluster and kind each
    tick cost a fleet more CPU than its checks); an expiry that wants to sweep runs in a task of
    its own, so a slow or unreachable cluster holds up no other, and never overlaps itself.
    Every JOURNAL_LOOK (and at the next tick after a change made through this replica) the
    Lease holder reads the change journal: a pause, resume or suspend made since (through any
    replica) has its cluster swept at the next tick."""

    def __init__(self, expiries: Sequence[PauseExpiry], *, look_every: timedelta = JOURNAL_LOOK):
        self.expiries = tuple(expiries)
        self.look_every = look_every.total_seconds()
        self._sweeping: dict[int, asyncio.Task[None]] = {}
        self._next_look: float | None = None
        self._seen: set[tuple[str, ...]] | None = None  # the entries read at the last look
        self._added = 0  # changes this replica had added to the journal at the last look

    async def __call__(self, deps: Deps) -> None:
        await self._look_at_journal(deps)
        for index, expiry in enumerate(self.expiries):
            running = self._sweeping.get(index)
            if (running is None or running.done()) and expiry.wants_to_sweep(deps):
                what = f"{getattr(expiry.sweep, '__name__', 'sweep')} of {expiry.cluster}"
                sweep = _logged(expiry.run(deps), what)
                task = asyncio.get_running_loop().create_task(sweep)
                self._sweeping[index] = task  # until it ends: a fleet's ended sweeps add up
                task.add_done_callback(functools.partial(self._ended, index))

    def _ended(self, index: int, task: asyncio.Task[None]) -> None:
        if self._sweeping.get(index) is task:
            del self._sweeping[index]

    async def _look_at_journal(self, deps: Deps) -> None:
        """Every `look_every`, and at the next tick after a change made through this replica
        (its end, or its reminder, is then due from its own time, not from a later look)."""
        moment = asyncio.get_running_loop().time()
        added = deps.journal.added
        waits = self._next_look is not None and moment < self._next_look
        if not is_leader(deps) or (waits and added == self._added):
            return
        self._next_look, fresh, self._added = moment + self.look_every, added - self._added, added
        try:
            recent = await deps.journal.recent(JOURNAL_WINDOW)
        except StateUnavailable as e:
            log.warning("the change journal cannot be read (%s); the hourly sweeps stand", e)
            return
        made_here = recent[:fresh]  # the newest: ours, give or take another replica's
        entries = {(c.at.isoformat(), c.user, c.action, c.target): c for c in recent}
        # The first look only learns what was there, but for what was made here meanwhile.
        news = [c for k, c in entries.items() if self._seen is not None and k not in self._seen]
        for cluster in changed_clusters([*news, *made_here], [e.cluster for e in self.expiries]):
            for expiry in self.expiries:
                if expiry.cluster == cluster:
                    expiry.sweep_soon()
        self._seen = set(entries)

    @property
    def sweeping(self) -> bool:
        """Whether a sweep is under way."""
        return any(not task.done() for task in self._sweeping.values())

    async def close(self) -> None:
        for task in self._sweeping.values():
            task.cancel()
        await asyncio.gather(*self._sweeping.values(), return_exceptions=True)


def changed_clusters(changes: Sequence[Change], clusters: Sequence[str]) -> set[str]:
    """The clusters that a pause, resume or suspend among `changes` was made on (its target
    ends `on <cluster>`, as `bot.keda.pause` and `bot.gitops.render_suspend` write it)."""
    timed = [c.target for c in changes if c.action in TIMED_ACTIONS and c.outcome != "failed"]
    return {n for n in clusters for target in timed if target.endswith(f" on {n}")}


async def _logged(run: Awaitable[None], what: str) -> None:
    """`run`, its failure logged (the next sweep tries again) rather than raised."""
    try:
        await run
    except Exception:
        log.exception("%s failed; the next sweep tries again", what)
