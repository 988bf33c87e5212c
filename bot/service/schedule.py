"""The service's timed jobs, on APScheduler's `AsyncIOScheduler` in the running event loop.

One alert check per cluster every `alerts.interval` (on the Lease holder only), the Lease
renewal, and any `Job` the composition root adds. A job never overlaps itself
(`max_instances=1`) and missed runs collapse into one (`coalesce`): a slow cluster delays its
next check, never stacks them. Job functions are plain `async def f(deps)`, so tests call them
directly and move `deps.clock`; a failing run is logged and the schedule goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.access.audit import Change
from bot.changes.approval import expire_requests
from bot.gitops import suspend_expiry
from bot.keda import expiry as keda_expiry
from bot.kube import lanes
from bot.kube.informer import CachedKube
from bot.kube.ports import CollectionWatcher, KubeReader, KubeWriter
from bot.notices.usecase import EvictionNotices
from bot.notices.watch import EvictionWatch
from bot.service.deps import Deps
from bot.slack.blocks import escape
from bot.state.retry import StateUnavailable

log = logging.getLogger(__name__)

JobFunction = Callable[[Deps], Awaitable[None]]
# One pass of a timed-change job on one cluster (reading through the kube given, when one is):
# act on what is due, say when the next is due.
Sweeper = Callable[[Deps, str, KubeWriter | None], Awaitable[datetime | None]]
# Every timed pause and suspend is listed this often, a safety net: the journal tells of those
# made through the bot (`JOURNAL_LOOK`), and each sweep remembers when the next one it saw is due.
# Only one written by hand (kubectl) waits for this sweep, as do reminders of those without an
# end (`changes.remind_after`, hours). A list per cluster and kind each interval cost a fleet of
# 1 000 clusters seven requests per cluster per interval; a watch per kind, 7 000 connections.
PAUSE_SWEEP_EVERY = timedelta(hours=1)
FIRST_SWEEPS_WITHIN = timedelta(seconds=30)  # after the start, spread over the fleet
# How often the Lease holder reads the change journal (one read for the whole fleet): a pause,
# resume or suspend made through any replica has its cluster swept at once, which learns its end.
JOURNAL_LOOK = timedelta(seconds=30)
JOURNAL_WINDOW = 50  # the newest entries read at each look (the journal keeps 50)
TIMED_ACTIONS = frozenset({"pause", "resume", "suspend"})
PAUSE_TICK = timedelta(seconds=2)  # how often the soonest known due time is looked at
EVICTION_EVERY = timedelta(minutes=1)  # an eviction job's run; the next follows at once
EVICTION_PASS = EVICTION_EVERY - timedelta(seconds=2)  # how long a run watches
EVICTION_RETRY = timedelta(seconds=5)  # after a failed list or watch, or while not the holder
APPROVAL_TICK = timedelta(seconds=30)  # how often requests past their 15 minutes are ended
WAKE_GAP = 0.25  # seconds between a check and the one more that changes during it asked for
HOLD_MARGIN = 0.05  # seconds past a hold's end: the check that sees it run out


@dataclass(frozen=True)
class Job:
    """A job: `run(deps)` every `every`; the first run after `every`, or at once (`at_start`),
    or after `first_after` (to spread per-cluster jobs over their interval).

    A job that posts or changes things should begin with `if not is_leader(deps): return`, so
    only one replica does it.
    """

    name: str
    run: JobFunction
    every: timedelta
    at_start: bool = False
    first_after: timedelta | None = None


def is_leader(deps: Deps) -> bool:
    """Whether this replica should do the leader's work (always, without a Lease)."""
    return deps.lease is None or deps.lease.is_leader()


async def check_cluster(
    deps: Deps, cluster: str, *, reads: KubeReader | None = None
) -> datetime | None:
    """The alert check of one cluster (reading through `reads` when given); does nothing
    unless this replica holds the Lease. Returns when a hold it saw runs out."""
    if not is_leader(deps):
        return None
    with lanes.scheduled(), deps.metrics.alert_check_seconds.time():
        return await deps.alerts.run_check(
            deps.kube[cluster], deps.clock(), still_leader=lambda: is_leader(deps), reads=reads
        )


class WatchedChecks:
    """The alert check of one cluster, reading a local copy kept current by watches
    (`bot.kube.informer`): run every interval as before, at once when anything it reads
    changes, and again when a hold it saw runs out, so a page comes `hold` after its cause
    rather than up to an interval later. One check at a time: changes during a check ask for
    one more after it (`WAKE_GAP` later, so a burst of changes costs two checks, not one each).
    """

    def __init__(self, deps: Deps, cluster: str) -> None:
        self.deps = deps
        self.cluster = cluster
        self.reads: CachedKube | None = None  # made at the first check (on the running loop)
        self.checks = 0
        self._lock = asyncio.Lock()
        self._again = False
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __call__(self, deps: Deps) -> None:
        await self.check()

    def wake(self) -> None:
        """Check as soon as the check under way (if any) is done."""
        if self._lock.locked():
            self._again = True
        elif self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.check())

    async def check(self) -> None:
        next_look = None
        async with self._lock:
            self._again = True
            while self._again:
                self._again = False
                self.checks += 1
                if self.reads is None:
                    self.reads = CachedKube(self.deps.kube[self.cluster], self.wake)
                next_look = await check_cluster(self.deps, self.cluster, reads=self.reads)
                self.reads.settle()
                if self._again:
                    await asyncio.sleep(WAKE_GAP)
        self._look_at(next_look)

    def _look_at(self, moment: datetime | None) -> None:
        """Check again at `moment` (a hold running out); replaces the time asked before."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if moment is not None:
            delay = (moment - self.deps.clock()).total_seconds() + HOLD_MARGIN
            self._timer = asyncio.get_running_loop().call_later(max(0.0, delay), self.wake)

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.reads is not None:
            await self.reads.close()


async def drain_alerts(deps: Deps) -> None:
    """Deliver what the alerts of every cluster still owe Slack (on the Lease holder): at
    start-up, and when this replica becomes the holder, so nothing waits for the next check."""
    if not is_leader(deps):
        return
    for cluster in deps.settings.clusters:
        await deps.alerts.drain(cluster.name)


async def keep_lease(deps: Deps) -> None:
    """Take or renew the Lease (a no-op without one). When the Lease cannot be used at all no
    replica may be running the checks: that is said in the alert channel once (not once per
    replica), and so is its end. A replica that just became the holder drains at once."""
    if deps.lease is None:
        return
    was_leader = deps.lease.is_leader()
    await deps.lease.renew(deps.clock())
    error = deps.lease.last_error
    where = f"{deps.lease.namespace}/{deps.lease.name}"
    await deps.alerts.note_trouble(
        f"lease:{where}",
        deps.clock(),
        error=None if error is None else str(error),
        warning=(
            f":warning: kai-chatops cannot use its Lease {where}, so no replica may be "
            f"running the alert checks: {escape(str(error))}"
        ),
        recovery=f":white_check_mark: kai-chatops can use its Lease {where} again.",
        speaker=deps.lease.last_holder in ("", deps.lease.identity),
    )
    if deps.lease.is_leader() and not was_leader:
        await drain_alerts(deps)


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
    the same lists); when the next timed one is due."""
    kube, now = kube or deps.kube[cluster], deps.clock()
    swept = await keda_expiry.sweep(kube, deps.slack, deps.settings, now, journal=deps.journal)
    await deps.alerts.remind(cluster, swept.held, swept.listed, now)
    return swept.next_due


async def sweep_suspends(
    deps: Deps, cluster: str, kube: KubeWriter | None = None
) -> datetime | None:
    """Resume (and reconcile) the timed Flux suspends that are due, and remind of those
    without an end (from the same lists); when the next timed one is due."""
    kube, now = kube or deps.kube[cluster], deps.clock()
    swept = await suspend_expiry.sweep(kube, deps.slack, deps.settings, now, journal=deps.journal)
    await deps.alerts.remind(cluster, swept.held, swept.listed, now)
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
        with lanes.scheduled():
            self.next_due = await self.sweep(deps, self.cluster, None)


class TimedChanges:
    """Every cluster's timed-pause and timed-suspend expiries (`PauseExpiry`) on one tick: a
    tick only compares times, a few microseconds per cluster (a job per cluster and kind each
    tick cost a fleet more CPU than its checks); an expiry that wants to sweep runs in a task of
    its own, so a slow or unreachable cluster holds up no other, and never overlaps itself.
    Every JOURNAL_LOOK the Lease holder reads the change journal: a pause, resume or suspend
    made since (through any replica) has its cluster swept at the next tick."""

    def __init__(self, expiries: Sequence[PauseExpiry], *, look_every: timedelta = JOURNAL_LOOK):
        self.expiries = tuple(expiries)
        self.look_every = look_every.total_seconds()
        self._sweeping: dict[int, asyncio.Task[None]] = {}
        self._next_look: float | None = None
        self._seen: set[tuple[str, ...]] | None = None  # the entries read at the last look

    async def __call__(self, deps: Deps) -> None:
        await self._look_at_journal(deps)
        for index, expiry in enumerate(self.expiries):
            running = self._sweeping.get(index)
            if (running is None or running.done()) and expiry.wants_to_sweep(deps):
                what = f"{getattr(expiry.sweep, '__name__', 'sweep')} of {expiry.cluster}"
                sweep = _logged(expiry.run(deps), what)
                self._sweeping[index] = asyncio.get_running_loop().create_task(sweep)

    async def _look_at_journal(self, deps: Deps) -> None:
        moment = asyncio.get_running_loop().time()
        if not is_leader(deps) or (self._next_look is not None and moment < self._next_look):
            return
        self._next_look = moment + self.look_every
        try:
            recent = await deps.journal.recent(JOURNAL_WINDOW)
        except StateUnavailable as e:
            log.warning("the change journal cannot be read (%s); the hourly sweeps stand", e)
            return
        entries = {(c.at.isoformat(), c.user, c.action, c.target): c for c in recent}
        if self._seen is not None:  # the first look only learns what was there
            news = [c for key, c in entries.items() if key not in self._seen]
            for cluster in changed_clusters(news, [e.cluster for e in self.expiries]):
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


class EvictionJob:
    """The eviction notices of one cluster (`notices.evictions`): for most of its interval,
    on the Lease holder, its list-then-watch of KAI's Evict Events, watch after watch, a
    failure tried again after EVICTION_RETRY (a run ends before the next is due, so the job
    never finds itself still running); a replica that does not hold the Lease forgets where
    it was and lists again once it does."""

    def __init__(self, cluster: str, notices: EvictionNotices) -> None:
        self.cluster = cluster
        self.watch = EvictionWatch(notices)

    async def __call__(self, deps: Deps) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + EVICTION_PASS.total_seconds()
        while (left := end - loop.time()) > 1:
            kube = deps.kube[self.cluster]
            if not is_leader(deps) or not isinstance(kube, CollectionWatcher):
                self.watch.forget()
                await asyncio.sleep(min(EVICTION_RETRY.total_seconds(), left))
                continue
            began = loop.time()
            with lanes.scheduled():
                watched = await self.watch.run(kube, deps.clock, lambda: is_leader(deps), left)
            if not watched or loop.time() - began < 1:  # never a tight loop of requests
                await asyncio.sleep(min(EVICTION_RETRY.total_seconds() if not watched else 1, left))


def eviction_jobs(deps: Deps) -> list[Job]:
    """One eviction watch per cluster when `notices.evictions` is on."""
    if not deps.settings.notices.evictions:
        return []
    notices = EvictionNotices(deps.settings, deps.alerts)
    return [
        Job(f"evictions-{c.name}", EvictionJob(c.name, notices), EVICTION_EVERY, at_start=True)
        for c in deps.settings.clusters
    ]


async def expire_approvals(deps: Deps) -> None:
    """Say on each approval request nobody approved in time that it expired (leader only)."""
    if is_leader(deps):
        await expire_requests(deps)


def alert_jobs(deps: Deps) -> list[Job]:
    """The Lease renewal (first, at once), per configured cluster the alert check, and one tick
    for every cluster's timed-pause and timed-suspend expiries (whoever holds the Lease runs
    them; the expiry is stored on the object).

    The clusters' first checks (and first sweeps) are spread evenly over one interval, the last
    one an interval after the start: a fleet's checks then come a few at a time, never all at
    once, and each cluster is still checked every interval.
    """
    jobs = [Job("alerts-drain", drain_alerts, deps.settings.alerts.interval, at_start=True)]
    if deps.lease is not None:
        jobs.append(Job("lease", keep_lease, deps.lease.renew_every, at_start=True))
    clusters = deps.settings.clusters
    interval = deps.settings.alerts.interval
    expiries: list[PauseExpiry] = []
    for index, cluster in enumerate(clusters, start=1):
        share = index / len(clusters)
        check = WatchedChecks(deps, cluster.name)
        jobs.append(Job(f"alerts-{cluster.name}", check, interval, first_after=interval * share))
        first = FIRST_SWEEPS_WITHIN * share
        expiries.append(PauseExpiry(cluster.name, first_sweep_after=first))
        expiries.append(PauseExpiry(cluster.name, first_sweep_after=first, sweep=sweep_suspends))
    jobs.append(Job("timed-changes", TimedChanges(expiries), PAUSE_TICK))
    if deps.settings.access.approval is not None:
        jobs.append(Job("approval-expiry", expire_approvals, APPROVAL_TICK))
    return jobs


class Schedule:
    """The scheduler and its jobs; `start()` inside the running loop, `await stop()` to end."""

    def __init__(self, deps: Deps, jobs: Sequence[Job]) -> None:
        self.deps = deps
        self.jobs = tuple(jobs)
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self._running: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        """Add the jobs and start.

        Raises:
            RuntimeError: outside a running event loop.
        """
        for job in self.jobs:
            first: dict[str, Any] = {"next_run_time": datetime.now(UTC)} if job.at_start else {}
            if job.first_after is not None:
                first = {"start_date": datetime.now(UTC) + job.first_after}
            self.scheduler.add_job(
                self._runner(job),
                "interval",
                seconds=job.every.total_seconds(),
                id=job.name,
                name=job.name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,  # late is better than never: run, however late
                replace_existing=True,
                **first,
            )
        self.scheduler.start()

    async def stop(self) -> None:
        """Stop scheduling and cancel the runs under way (they are idempotent: the next start
        redoes them)."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
            await asyncio.sleep(0)  # the shutdown is queued on the loop: let it happen now
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        for job in self.jobs:
            if isinstance(job.run, WatchedChecks | TimedChanges):
                await job.run.close()
        for gateway in self.deps.kube.values():
            close_streams = getattr(gateway, "close_streams", None)  # a gateway's watches
            if close_streams is not None:
                await close_streams()

    def _runner(self, job: Job) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            task = asyncio.current_task()
            if task is not None:
                self._running.add(task)
            try:
                await self.deps.inflight.acks_sent()  # a job due during a burst of acks waits
                await job.run(self.deps)
            except asyncio.CancelledError:
                log.info("job %s stopped with the service", job.name)
            except Exception:
                log.exception("job %s failed; it runs again in %s", job.name, job.every)
            finally:
                if task is not None:
                    self._running.discard(task)

        return run


def build_scheduler(deps: Deps, extra_jobs: Sequence[Job] = ()) -> Schedule:
    """The alert jobs (see `alert_jobs`), the eviction watches, plus `extra_jobs`, not started
    yet."""
    return Schedule(deps, [*alert_jobs(deps), *eviction_jobs(deps), *extra_jobs])
