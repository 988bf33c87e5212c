"""The scheduler: which jobs run how often, the real AsyncIOScheduler running them, no stacking."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobEvent
from waiting import wait_until

from bot.access.audit import Change
from bot.config import settings as config
from bot.core.metrics import Metrics
from bot.service import jobs_alerts, jobs_timed, schedule
from bot.service.deps import Deps
from bot.service.schedule import Job

SETTINGS = config.parse_settings(
    {
        "clusters": [{"name": "prod"}, {"name": "staging"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "alerts": {"interval": "45s"},
    }
)
NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


class Lease:
    """A lease this replica holds or not."""

    def __init__(self, held: bool) -> None:
        self.held = held
        self.renew_every = timedelta(seconds=4)
        self.renewals = 0

    def is_leader(self) -> bool:
        return self.held

    async def renew(self, now: datetime) -> bool:
        self.renewals += 1
        return self.held


class Desk:
    def __init__(self) -> None:
        self.checked: list[str] = []
        self.drained: list[str] = []

    async def run_check(self, kube: Any, now: datetime, **_: Any) -> None:
        self.checked.append(kube)

    async def drain(self, cluster: str) -> None:
        self.drained.append(cluster)

    def drain_apart(self, cluster: str) -> None:  # the drain the Lease job hands a courier
        self.drained.append(cluster)


class Journal:
    """The change journal: the entries another replica (or this one) added, newest first."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.reads = 0
        self.added = 0  # through this replica

    def add_here(self, change: Change) -> None:
        self.changes.insert(0, change)
        self.added += 1

    async def recent(self, limit: int) -> list[Change]:
        self.reads += 1
        return self.changes[:limit]


def deps(
    lease: Lease | None = None,
    desk: Desk | None = None,
    settings: config.Settings = SETTINGS,
    journal: Journal | None = None,
) -> Deps:
    """Deps whose Slack and state are never used by the scheduler itself."""
    return Deps(
        settings,
        {"prod": "prod-gateway", "staging": "staging-gateway"},  # type: ignore[dict-item]
        Metrics(),
        slack=None,  # type: ignore[arg-type]
        confirm_key=b"",
        once=None,  # type: ignore[arg-type]
        alert_store=None,  # type: ignore[arg-type]
        alerts=desk or Desk(),  # type: ignore[arg-type]
        lease=lease,  # type: ignore[arg-type]
        journal=journal or Journal(),  # type: ignore[arg-type]
        clock=lambda: NOW,
    )


def test_per_cluster_checks_pause_and_suspend_expiry_the_lease_and_the_drain_from_the_start() -> (
    None
):
    jobs = schedule.alert_jobs(deps(Lease(held=True)))
    assert [(j.name, j.every, j.at_start) for j in jobs] == [
        ("alerts-drain", timedelta(seconds=45), True),
        ("lease", timedelta(seconds=4), True),
        ("alerts-prod", timedelta(seconds=45), False),
        ("alerts-staging", timedelta(seconds=45), False),
        ("timed-changes", timedelta(seconds=2), False),
        ("trim-heap", timedelta(minutes=1), False),
    ]
    (ticking,) = [j.run for j in jobs if isinstance(j.run, jobs_timed.TimedChanges)]
    assert [(e.cluster, e.sweep) for e in ticking.expiries] == [
        ("prod", jobs_timed.sweep_pauses),
        ("prod", jobs_timed.sweep_suspends),
        ("prod", jobs_timed.sweep_cordons),
        ("staging", jobs_timed.sweep_pauses),
        ("staging", jobs_timed.sweep_suspends),
        ("staging", jobs_timed.sweep_cordons),
    ]


async def test_jobs_never_overlap_themselves_and_missed_runs_collapse() -> None:
    planned = schedule.build_scheduler(deps())
    planned.start()
    try:
        for job in planned.scheduler.get_jobs():
            assert job.max_instances == 1
            assert job.coalesce is True
    finally:
        await planned.stop()


async def test_only_the_lease_holder_checks() -> None:
    desk = Desk()
    await jobs_alerts.check_cluster(deps(Lease(held=False), desk), "prod")
    assert desk.checked == []
    await jobs_alerts.check_cluster(deps(Lease(held=True), desk), "prod")
    await jobs_alerts.check_cluster(deps(None, desk), "staging")
    assert desk.checked == ["prod-gateway", "staging-gateway"]


async def test_the_real_scheduler_runs_an_added_job_on_the_running_loop() -> None:
    ran = asyncio.Event()
    seen: list[Deps] = []

    async def expire_pauses(d: Deps) -> None:
        seen.append(d)
        ran.set()

    the_deps = deps()
    planned = schedule.build_scheduler(
        the_deps, [Job("expire-pauses", expire_pauses, timedelta(hours=1), at_start=True)]
    )
    planned.start()
    try:
        await asyncio.wait_for(ran.wait(), timeout=5)
    finally:
        await planned.stop()
    assert seen == [the_deps]


async def test_a_slow_run_is_not_stacked_and_a_failing_one_does_not_stop_the_schedule() -> None:
    skipped, second_run, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
    runs = 0

    async def slow_then_failing(_: Deps) -> None:
        nonlocal runs
        runs += 1
        if runs == 1:
            await release.wait()
            raise RuntimeError("the first run fails")
        second_run.set()

    planned = schedule.build_scheduler(
        deps(), [Job("slow", slow_then_failing, timedelta(seconds=0.05), at_start=True)]
    )

    def on_skip(event: JobEvent) -> None:
        if event.job_id == "slow":
            skipped.set()

    planned.scheduler.add_listener(on_skip, EVENT_JOB_MAX_INSTANCES)
    planned.start()
    try:
        await asyncio.wait_for(skipped.wait(), timeout=5)
        assert runs == 1
        release.set()
        await asyncio.wait_for(second_run.wait(), timeout=5)
    finally:
        await planned.stop()


async def test_stopping_cancels_a_run_under_way() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def forever(_: Deps) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    planned = schedule.build_scheduler(
        deps(), [Job("forever", forever, timedelta(hours=1), at_start=True)]
    )
    planned.start()
    await asyncio.wait_for(started.wait(), timeout=5)
    await planned.stop()
    assert cancelled.is_set()


async def test_a_fleets_first_checks_come_within_seconds_then_every_interval() -> None:
    """A cause already there at a start is judged at its cluster's first check: the first
    checks come a few milliseconds apart from the start (the first at once), not spread over
    the interval; then each cluster is checked every interval."""
    fleet = config.parse_settings(
        {
            "clusters": [{"name": f"c{i}"} for i in range(4)],
            "slack": {"alert_channel": "C0ALERTS"},
            "alerts": {"interval": "40s"},
        }
    )
    planned = schedule.build_scheduler(deps(settings=fleet))
    started = datetime.now(UTC)
    planned.start()
    try:
        jobs = planned.scheduler.get_jobs()
        firsts = {j.name: (j.next_run_time - started).total_seconds() for j in jobs}
        intervals = {j.trigger.interval for j in jobs if j.name.startswith("alerts-")}
    finally:
        await planned.stop()
    offsets = [firsts[f"alerts-c{i}"] for i in range(4)]
    assert offsets == sorted(offsets) and max(offsets) < 1
    assert intervals == {timedelta(seconds=40)}


def first_checks(clusters: int, interval: str) -> list[timedelta]:
    fleet = config.parse_settings(
        {
            "clusters": [{"name": f"c{i}"} for i in range(clusters)],
            "slack": {"alert_channel": "C0ALERTS"},
            "alerts": {"interval": interval},
        }
    )
    jobs = schedule.alert_jobs(deps(settings=fleet))
    return [j.first_after for j in jobs if j.name.startswith("alerts-c") and j.first_after]


def test_a_thousand_clusters_first_checks_are_spread_over_five_seconds_none_at_once() -> None:
    offsets = first_checks(1000, "30s")
    assert offsets == sorted(offsets) and len(set(offsets)) == 999  # the first is at once
    assert offsets[-1] <= timedelta(seconds=5)
    assert max(first_checks(10, "1s")) < timedelta(seconds=1)  # never past the interval


def test_with_a_lease_taking_it_brings_the_first_checks_and_the_jobs_come_an_interval_later() -> (
    None
):
    """At a start each cluster was checked twice at once, by its job's first run and by the
    wake of taking the Lease (`LeaseJob`): 2 000 reads of the API instead of 1 000 for a fleet
    of 1 000 clusters, whose copies were not listed yet (bench/fleet_ha.py). With a Lease only
    taking it brings the first checks; each job's own first run is an interval later."""
    fleet = config.parse_settings(
        {
            "clusters": [{"name": f"c{i}"} for i in range(10)],
            "slack": {"alert_channel": "C0ALERTS"},
            "alerts": {"interval": "30s"},
        }
    )
    without = {j.name: j.first_after for j in schedule.alert_jobs(deps(settings=fleet))}
    jobs = schedule.alert_jobs(deps(TakenLease(held=False), settings=fleet))
    leased = {j.name: j.first_after for j in jobs}
    lease_job = next(j.run for j in jobs if j.name == "lease")
    assert isinstance(lease_job, jobs_alerts.LeaseJob)
    wakes = [after for _, after in lease_job.checks]
    assert wakes == [without[f"alerts-c{i}"] or timedelta(0) for i in range(10)]
    for i in range(10):
        assert leased[f"alerts-c{i}"] == wakes[i] + timedelta(seconds=30)


class TakenLease(Lease):
    """A Lease another replica held until this one takes it, at its next renewal."""

    last_error = None
    namespace, name, identity, last_holder = "kai-chatops", "alerts", "me", ""

    async def renew(self, now: datetime) -> bool:
        self.held = True
        return await super().renew(now)


class TroubleDesk(Desk):
    async def note_trouble(self, *_: Any, **__: Any) -> None:
        return None


async def test_a_replica_that_takes_the_lease_over_checks_its_clusters_at_once() -> None:
    """Until then it checked nothing (and followed nothing): its checks run again within
    seconds of the takeover, not at each cluster's next interval."""
    desk = TroubleDesk()
    calls = dict.fromkeys(("server_version", "read_pod_log", "patch_object", "create_object"))
    gateways = {n: SimpleNamespace(cluster=n, **calls) for n in ("prod", "staging")}
    lease = TakenLease(held=False)
    the_deps = dataclasses.replace(deps(lease, desk), kube=gateways)  # type: ignore[arg-type]
    jobs = {j.name: j.run for j in schedule.alert_jobs(the_deps)}
    checks = [jobs["alerts-prod"], jobs["alerts-staging"]]
    assert all(isinstance(c, jobs_alerts.WatchedChecks) for c in checks)
    try:
        for check in checks:
            await check(the_deps)  # the first checks, while another replica holds the Lease
        assert desk.checked == [] and desk.drained == []
        await jobs["lease"](the_deps)
        assert desk.drained == ["prod", "staging"]
        for _ in range(100):
            if len(desk.checked) == 2:
                break
            await asyncio.sleep(0.01)
        assert sorted(g.cluster for g in desk.checked) == ["prod", "staging"]  # type: ignore[attr-defined]
    finally:
        for check in checks:
            await check.close()  # type: ignore[attr-defined]
    for check in checks:  # a takeover's wake (or a change) after the service stopped: nothing
        check.wake()  # type: ignore[attr-defined]
    await asyncio.sleep(0.05)
    assert len(desk.checked) == 2


async def test_one_clusters_slow_sweep_holds_up_no_other_clusters_and_never_overlaps() -> None:
    """The fleet's timed-change tick: a sweep stuck on an unreachable cluster runs on in its own
    task; the other cluster's sweeps go on, and the stuck one is not started again meanwhile."""
    release = asyncio.Event()
    swept: list[str] = []

    async def sweep(d: Deps, cluster: str, kube: Any) -> datetime | None:
        swept.append(cluster)
        if cluster == "prod":
            await release.wait()
        return None

    gateways = {name: SimpleNamespace(cluster=name) for name in ("prod", "staging")}
    the_deps = dataclasses.replace(deps(), kube=gateways)  # type: ignore[arg-type]
    every = timedelta(0)
    ticking = jobs_timed.TimedChanges(
        [
            jobs_timed.PauseExpiry(c, sweep_every=every, first_sweep_after=every, sweep=sweep)
            for c in ("prod", "staging")
        ]
    )
    try:
        for _ in range(3):
            await ticking(the_deps)
            await asyncio.sleep(0)  # let the sweeps started run
        assert swept.count("prod") == 1
        assert swept.count("staging") == 3
        release.set()
        await asyncio.sleep(0)
        await ticking(the_deps)
        await asyncio.sleep(0)
        assert swept.count("prod") == 2
    finally:
        await ticking.close()


async def test_a_sweep_closes_its_clusters_idle_connections_and_is_not_kept_once_ended() -> None:
    """A sweep's lists are its cluster's only requests for an hour (the checks read watched
    copies): the connections they opened are closed after it, not left idle holding their last
    answers, and the ended sweep's task is let go (a fleet's thousands added up)."""
    closed: list[str] = []

    async def sweep(d: Deps, cluster: str, kube: Any) -> datetime | None:
        return None

    gateways = {
        name: SimpleNamespace(cluster=name, close_idle_connections=lambda n=name: closed.append(n))
        for name in ("prod", "staging")
    }
    the_deps = dataclasses.replace(deps(), kube=gateways)  # type: ignore[arg-type]
    every = timedelta(0)
    ticking = jobs_timed.TimedChanges(
        [
            jobs_timed.PauseExpiry(c, sweep_every=every, first_sweep_after=every, sweep=sweep)
            for c in ("prod", "staging")
        ]
    )
    try:
        await ticking(the_deps)
        await wait_until(lambda: not ticking._sweeping, 5, "the sweeps to end and be let go")
        assert sorted(closed) == ["prod", "staging"]
    finally:
        await ticking.close()


async def test_a_change_the_journal_tells_of_has_its_cluster_swept_at_the_next_tick() -> None:
    """Sweeps are hourly; a pause, resume or suspend recorded in the journal since the last
    look (through any replica) has its own cluster swept (both kinds) at the next tick, once;
    a failed change, an acknowledgement, or what was there at the first look sweeps nothing."""
    swept: list[tuple[str, str]] = []

    async def sweep(kind: str, d: Deps, cluster: str, kube: Any) -> datetime | None:
        swept.append((cluster, kind))
        return None

    journal = Journal()
    journal.changes = [Change("U1", "pause", "ScaledJob a/old on prod", "ok", NOW)]
    the_deps = deps(journal=journal)
    hour = timedelta(hours=1)
    ticking = jobs_timed.TimedChanges(
        [
            jobs_timed.PauseExpiry(c, sweep_every=hour, first_sweep_after=hour, sweep=sweeper)
            for c in ("prod", "staging")
            for sweeper in (functools.partial(sweep, "keda"), functools.partial(sweep, "flux"))
        ],
        look_every=timedelta(0),
    )

    async def tick() -> None:
        await ticking(the_deps)
        await asyncio.gather(*ticking._sweeping.values())

    try:
        await tick()
        journal.changes[:0] = [
            Change("U2", "pause", "ScaledJob a/b on prod", "failed", NOW),
            Change("U2", "acknowledge", "alert A1 on prod", "ok", NOW),
        ]
        await tick()
        assert swept == []
        journal.changes.insert(
            0, Change("U3", "suspend", "HelmRelease f/kai on staging", "ok", NOW)
        )
        await tick()
        assert sorted(swept) == [("staging", "flux"), ("staging", "keda")]
        await tick()
        assert len(swept) == 2
        assert journal.reads == 4
    finally:
        await ticking.close()


async def test_a_change_made_here_has_its_cluster_swept_at_the_next_tick_not_the_next_look() -> (
    None
):
    """The journal is looked at every 30 s; a change this replica added (even before the first
    look, which otherwise only learns what was there) is looked for at the next tick, and
    its cluster swept then: its end or its reminder is due from its own time."""
    swept: list[str] = []

    async def sweep(d: Deps, cluster: str, kube: Any) -> datetime | None:
        swept.append(cluster)
        return None

    journal = Journal()
    the_deps = deps(journal=journal)
    hour = timedelta(hours=1)
    ticking = jobs_timed.TimedChanges(
        [
            jobs_timed.PauseExpiry(c, sweep_every=hour, first_sweep_after=hour, sweep=sweep)
            for c in ("prod", "staging")
        ]
    )

    async def tick() -> None:
        await ticking(the_deps)
        await asyncio.gather(*ticking._sweeping.values())

    try:
        journal.add_here(Change("U1", "pause", "ScaledJob a/b on prod", "ok", NOW))
        await tick()
        assert swept == ["prod"] and journal.reads == 1
        await tick()  # nothing new here, and the next look is 30 s away
        assert swept == ["prod"] and journal.reads == 1
        journal.add_here(Change("U1", "pause", "ScaledJob a/c on staging", "ok", NOW))
        await tick()
        assert swept == ["prod", "staging"] and journal.reads == 2
    finally:
        await ticking.close()


def test_the_cluster_of_a_change_is_the_one_its_target_ends_on() -> None:
    changes = [
        Change("U1", "pause", "ScaledJob a/b on prod-eu", "ok", NOW),
        Change("U1", "resume", "ScaledObject a/c on eu", "unknown", NOW),
    ]
    assert jobs_timed.changed_clusters(changes, ["prod", "prod-eu", "eu", "staging"]) == {
        "prod-eu",
        "eu",
    }
