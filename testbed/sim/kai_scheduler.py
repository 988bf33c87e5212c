"""What KAI's scheduler writes in the simulated cluster, as the simulator's release writes it
(`sim.kai`, `testbed.sim.kai_releases`; KAI-Scheduler's source at each release's tag).

- `evict`: the Evict Event (pkg/scheduler/cache/status_updater/default_status_updater.go
  `Evicted`); v0.17.0 also stamps the evicted PodGroup's `kai.scheduler/last-eviction-timestamp`
  (same file, `setPodGroupLastEvictionTimeStamp`: RFC 3339, UTC, whole seconds).
- `gang_completing`: a gang whose pods finish one by one. v0.16.2 to v0.17.0 no longer see its
  Succeeded pods (pkg/scheduler/cache/cache.go `filterTerminalPods`), judge it stale and evict
  the rest (actions/stalegangeviction/stalegangeviction.go; KAI #1968): one Evict Event per pod,
  `Workload doesn't meet the minimum required number of pods (N), evicting remaining pod: ...`
  (pkg/scheduler/api/unschedule_info.go). Older releases leave it alone (`IsStale`'s guard).
- `stale_gang`: a gang that lost a pod, evicted by every release.
- `queue_missing`: a PodGroup naming a Queue that does not exist: `QueueDoesNotExist`, `Queue
  '<q>' does not exist` from v0.13.0 (cache/cluster_info/cluster_info.go); v0.12 skips it and
  writes nothing.
- `within_preemption_delay`: v0.17.0's `spec.preemptionDelay` holding a gang back from
  preempting: `PreemptionDelayNotElapsed` after the allocation's own reason
  (actions/utils/input_jobs.go `recordPreemptionDelayFitError`).
- `cycle`: what a live scheduler shows of itself while groups wait. It records an
  `Unschedulable` Event on each pending group at every cycle (pkg/scheduler/framework/
  session.go, cache/status_updater/default_status_updater.go `RecordJobStatusEvent`, source
  `kai-scheduler`), and client-go's recorder lets a repeat about one object through once per 5
  minutes after a burst (k8s.io/client-go tools/record/events_cache.go `defaultSpamQPS`
  1/300): so no pending group goes untouched for longer. Not while the scheduler has no Ready
  pod, nor while it is stalled (`testbed.sim.kai_stall`, KAI #1536). The demo runs it
  (`Simulator.start_scheduler`): without it, every group left waiting looked like a stalled
  scheduler six minutes later, and the stall alert paged a healthy cluster.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from testbed.sim import evictions
from testbed.sim.kai_stall import DEPLOYMENT, KAI_NS, SCHEDULER, STALLED
from testbed.sim.objects import timestamp
from testbed.sim.podgroups import PODGROUP, WORK_NS, pending_group, pending_pod
from testbed.sim.scheduling_writes import recorded_event
from testbed.sim.simulator import Simulator

log = logging.getLogger(__name__)

LAST_EVICTION = "kai.scheduler/last-eviction-timestamp"
STALE_GANG = "stalegangeviction"
NO_ROOM = (
    "Resources were found for 0 pods while {pods} are required for gang scheduling. Additional "
    "pods cannot be scheduled due to: no nodes with enough resources were found: 4 node(s) "
    "didn't have enough resources: GPUs"
)


REPEAT_LET_THROUGH = timedelta(minutes=5)
TOUCHING = frozenset({"Unschedulable", "NotReady"})  # what a cycle says of a waiting group


CYCLE_EVERY = 30.0  # seconds of the demo's time between two `cycle`s: well within 5 minutes


async def run_live(sim: Simulator, every: float = CYCLE_EVERY) -> None:
    """`cycle` every `every` seconds, until cancelled."""
    while True:
        try:
            cycle(sim)
        except Exception:  # a cycle that failed is tried again at the next
            log.exception("the simulated KAI scheduler's cycle failed")
        await asyncio.sleep(every)


def cycle(sim: Simulator) -> list[str]:
    """One cycle of a live scheduler with no room for what waits: each pending PodGroup not
    touched for REPEAT_LET_THROUGH gets its `Unschedulable` Event counted up (made, the
    first time). The groups touched (`namespace/name`)."""
    if not _scheduling(sim):
        return []
    now = sim.store.clock()
    events = _scheduler_events(sim)
    touched = []
    for group in _listed(sim, PODGROUP, "PodGroup"):
        meta = group["metadata"]
        key = (str(meta.get("namespace") or ""), str(meta["name"]))
        about = events.get(key, [])
        if not _waits(group) or now - _last_touch(group, about) < REPEAT_LET_THROUGH:
            continue
        sim.apply(_counted_up(group, about, now))
        touched.append("/".join(key))
    return touched


def _scheduling(sim: Simulator) -> bool:
    """Whether the default shard's scheduler runs: a Ready pod, and not stalled."""
    deployment = sim.get("apps/v1", "Deployment", DEPLOYMENT, KAI_NS)
    if deployment is None or STALLED in (deployment["metadata"].get("annotations") or {}):
        return False
    return int((deployment.get("status") or {}).get("readyReplicas") or 0) > 0


def _listed(sim: Simulator, api_version: str, kind: str) -> list[dict[str, Any]]:
    try:
        rtype = sim.store.resolve(api_version, kind)
    except Exception:  # the kind is not installed: nothing of it to look at
        return []
    items: list[dict[str, Any]] = sim.store.list_objects(rtype, None)["items"]
    return items


def _scheduler_events(sim: Simulator) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The scheduler's Events about PodGroups, by group."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for event in _listed(sim, "v1", "Event"):
        involved = event.get("involvedObject") or {}
        source = (event.get("source") or {}).get("component")
        if involved.get("kind") == "PodGroup" and source == SCHEDULER:
            key = (str(involved.get("namespace") or ""), str(involved.get("name")))
            found.setdefault(key, []).append(event)
    return found


def _waits(group: dict[str, Any]) -> bool:
    """Pods requested that are not all allocated (the pod-group-controller's sums)."""
    resources = (group.get("status") or {}).get("resourcesStatus") or {}
    allocated = resources.get("allocated") or {}
    return any(
        _amount(wanted) > _amount(allocated.get(name))
        for name, wanted in (resources.get("requested") or {}).items()
    )


def _amount(quantity: Any) -> float:
    try:
        return float(str(quantity or 0))
    except ValueError:  # a suffixed quantity (`16Gi`): the simulator's groups ask for GPUs
        return 0.0


def _last_touch(group: dict[str, Any], events: list[dict[str, Any]]) -> datetime:
    """The scheduler's last write about the group: a condition, an Event; else its creation."""
    conditions = (group.get("status") or {}).get("schedulingConditions") or []
    stamps = [
        group["metadata"].get("creationTimestamp"),
        *(c.get("lastTransitionTime") for c in conditions),
        *(e.get("lastTimestamp") for e in events),
    ]
    return max(datetime.fromisoformat(str(s).replace("Z", "+00:00")) for s in stamps if s)


def _counted_up(
    group: dict[str, Any], events: list[dict[str, Any]], now: datetime
) -> dict[str, Any]:
    """The group's Unschedulable Event once more (count up, `lastTimestamp` now), or its first."""
    said = next((e for e in events if e.get("reason") in TOUCHING), None)
    if said is not None:
        count = int(said.get("count") or 1) + 1
        return {**said, "count": count, "lastTimestamp": timestamp(now)}
    meta = group["metadata"]
    conditions = (group.get("status") or {}).get("schedulingConditions") or [{}]
    message = str(conditions[0].get("message") or "no nodes with enough resources were found")
    event = recorded_event(
        meta["namespace"], "PodGroup", meta["name"], "Unschedulable", message, 1, now, SCHEDULER
    )
    event["type"] = "Normal"
    event["involvedObject"] |= {"apiVersion": PODGROUP, "uid": meta.get("uid", "")}
    return event


def evict(
    sim: Simulator, group: dict[str, Any], message: str, annotations: dict[str, str], nth: int = 0
) -> dict[str, Any]:
    """An Evict Event on the stored PodGroup `group` (and, on v0.17, its eviction time on it);
    the `nth` of one cycle's evictions is recorded `nth` microseconds later, as the recorder
    names each Event by its time."""
    now = sim.store.clock()
    at = now + timedelta(microseconds=nth)
    event = sim.apply(evictions.evict_event(group, message, annotations, at))
    if sim.kai.preemption_delay:
        meta = group["metadata"]
        stamp = {"metadata": {"annotations": {LAST_EVICTION: _whole_seconds(now)}}}
        sim.patch(PODGROUP, "PodGroup", meta["name"], meta["namespace"], patch=stamp)
    return event


def gang_completing(sim: Simulator, job: str = "sweep-final", pods: int = 3) -> bool:
    """A gang of `pods` in annia whose first pod finishes (Succeeded) while the rest still run;
    where its release evicts completing gangs, KAI evicts (deletes) the rest, an Evict Event
    each; else they finish too. Whether KAI evicted it."""
    group = _running_gang(sim, job, pods)
    sim.patch_status("v1", "Pod", f"{job}-0", WORK_NS, {"phase": "Succeeded"})
    if not sim.kai.evicts_completing_gangs:
        for index in range(1, pods):
            sim.patch_status("v1", "Pod", f"{job}-{index}", WORK_NS, {"phase": "Succeeded"})
        return False
    _evict_rest(sim, group, job, pods)
    return True


def stale_gang(sim: Simulator, job: str = "sweep-broken", pods: int = 3) -> None:
    """A gang in annia that lost a pod (Failed): every release evicts the rest of it."""
    group = _running_gang(sim, job, pods)
    sim.patch_status("v1", "Pod", f"{job}-0", WORK_NS, {"phase": "Failed"})
    _evict_rest(sim, group, job, pods)


def queue_missing(sim: Simulator, job: str = "orphan-train", queue: str = "team-z") -> str:
    """A one-pod job in annia labelled for a Queue that does not exist; its PodGroup's name."""
    group = f"pg-{job}"
    message = f"Queue '{queue}' does not exist"
    waiting = pending_group(group, queue, 1, 1, "QueueDoesNotExist", message, {}, sim.store.clock())
    del waiting["status"]["schedulingConditions"][0]["reasons"][0]["details"]
    pod = pending_pod(f"{job}-0", group, queue, 1, f"QueueDoesNotExist: {message}.")
    if not sim.kai.queue_does_not_exist:  # v0.12: nothing said at all
        del waiting["status"]["schedulingConditions"]
        pod["status"]["conditions"] = []
    sim.apply(waiting)
    sim.apply(pod)
    return group


def within_preemption_delay(
    sim: Simulator, job: str = "llm-eval", delay: timedelta = timedelta(minutes=15)
) -> str:
    """A 2-pod gang of annia, created now with `spec.preemptionDelay`, that found no room and
    may not preempt yet (v0.17 only); its PodGroup's name.

    Raises:
        ValueError: the simulator's release has no preemption delay.
    """
    if not sim.kai.preemption_delay:
        raise ValueError(f"KAI {sim.kai.tag} has no preemption delay (v0.17.0, #1832)")
    now = sim.store.clock()
    waiting = _waiting(f"pg-{job}", "annia", 2, now)
    waiting["spec"]["preemptionDelay"] = _go_duration(delay)
    ends = _whole_seconds(datetime.fromisoformat(_whole_seconds(now)) + delay)
    waiting["status"]["schedulingConditions"][0]["reasons"].append(
        {
            "reason": "PreemptionDelayNotElapsed",
            "message": f"Workload is within its preemption delay window ({_go_duration(delay)}) "
            f"and may not trigger evictions before {ends}",
        }
    )
    return _submitted(sim, waiting, job)


def waiting_gang(sim: Simulator, job: str = "vision-sweep", pods: int = 2) -> str:
    """A gang of queue vision in annia that finds no room, from now on; its PodGroup's name."""
    return _submitted(sim, _waiting(f"pg-{job}", "vision", pods, sim.store.clock()), job)


def reclaimed(sim: Simulator, group: str) -> None:
    """A running group reclaimed back to pending: its Evict Event (and v0.17's eviction time on
    it), its GPUs freed, and the scheduler's condition again: written anew by v0.17, which
    cleared it when the group ran; left as it was by older releases, which never cleared it (a
    condition of the same message is not written again: `shouldUpdateCondition`)."""
    stored = sim.get(PODGROUP, "PodGroup", group, WORK_NS) or {}
    requested = stored["status"]["resourcesStatus"]["requested"]
    notes = evictions.kai_annotations("reclaim", 1, "pg-annia-burst", WORK_NS)
    evict(sim, stored, f"Pod {WORK_NS}/{group} was reclaimed", notes)
    status: dict[str, Any] = {"resourcesStatus": {"requested": requested, "allocated": None}}
    if sim.kai.clears_conditions:
        pods = int(stored["spec"]["minMember"])
        again = _waiting(group, "vision", pods, sim.store.clock())
        status["schedulingConditions"] = again["status"]["schedulingConditions"]
    sim.patch_status(PODGROUP, "PodGroup", group, WORK_NS, status)


def _waiting(group: str, queue: str, pods: int, now: datetime) -> dict[str, Any]:
    """A gang of `pods` one-GPU pods the allocation found no room for, at `now`."""
    no_room = NO_ROOM.format(pods=pods)
    waiting = pending_group(group, queue, pods, pods, "PodSchedulingErrors", no_room, {}, now)
    condition = waiting["status"]["schedulingConditions"][0]
    del condition["reasons"][0]["details"]  # the gang's fit error names no queue
    condition["lastTransitionTime"] = timestamp(now)
    return waiting


def _submitted(sim: Simulator, waiting: dict[str, Any], job: str) -> str:
    """The group stored, with its pods (Unschedulable, as the scheduler marks them)."""
    sim.apply(waiting)
    spec, first = waiting["spec"], waiting["status"]["schedulingConditions"][0]["reasons"][0]
    for index in range(int(spec["minMember"])):
        said = f"{first['reason']}: {first['message']}."
        name = str(waiting["metadata"]["name"])
        sim.apply(pending_pod(f"{job}-{index}", name, str(spec["queue"]), 1, said))
    return str(waiting["metadata"]["name"])


def _running_gang(sim: Simulator, job: str, pods: int) -> dict[str, Any]:
    """A gang of `pods` one-GPU pods, running: all it requested allocated."""
    group, gpus = f"pg-{job}", {"nvidia.com/gpu": str(pods)}
    stored = sim.apply(
        {
            "apiVersion": PODGROUP,
            "kind": "PodGroup",
            "metadata": {"name": group, "namespace": WORK_NS},
            "spec": {"minMember": pods, "queue": "annia"},
            "status": {"resourcesStatus": {"requested": gpus, "allocated": gpus}},
        }
    )
    for index in range(pods):
        pod = pending_pod(f"{job}-{index}", group, "annia", 1, "")
        pod["status"] = {"phase": "Running"}
        sim.apply(pod)
    return stored


def _evict_rest(sim: Simulator, group: dict[str, Any], job: str, pods: int) -> None:
    """Every pod of the gang but its first deleted, then one Evict Event each, as
    `stalegangeviction` evicts the active pods of a stale gang."""
    for index in range(1, pods):
        sim.delete("v1", "Pod", f"{job}-{index}", WORK_NS)
    for index in range(1, pods):
        message = (
            f"Workload doesn't meet the minimum required number of pods ({pods}), evicting "
            f"remaining pod: {WORK_NS}/{job}-{index}"
        )
        evict(sim, group, message, evictions.kai_annotations(STALE_GANG, pods - 1), nth=index)


def _whole_seconds(moment: datetime) -> str:
    return moment.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_duration(delay: timedelta) -> str:
    """`time.Duration.String()` of whole seconds: `15m0s`, `1h0m0s`, `45s`."""
    hours, rest = divmod(int(delay.total_seconds()), 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    return f"{minutes}m{seconds}s" if minutes else f"{seconds}s"
