"""What a shard's scheduler shows of being alive, read from a check's objects: its leader Lease
(holder, last renewal), its pending PodGroups and when the scheduler last touched one of them
(a scheduling condition written, an Event counted up), and whether its pods report Ready.

Pure: the judgement and its words are `bot.alerts.stall`'s. From KAI-Scheduler's source (the
same at v0.12.0 and today):
- The Lease: in the scheduler's `--namespace` (kai-config's `spec.namespace`), named
  `bot.rules.kai.scheduler_lease_name`; holder `<hostname>_<uuid>` (the pod's name, then a
  UUID), 15 s duration, renewed every few seconds (cmd/scheduler/app/server.go). Only with
  leader election, which the operator adds for more than one replica
  (pkg/operator/operands/scheduler/resources_for_shard.go `--leader-elect=true`): with one
  replica there is no Lease, and a Lease left from when there were more is nobody's.
- The shard's PodGroups: those whose `<global.nodePoolLabelKey>` label is the shard's
  `partitionLabelValue`, or that lack the label for a shard without one
  (pkg/scheduler/conf/scheduler_conf.go `GetLabelSelector`, the scheduler's PodGroup lister).
- A pending one: pods requested that are not all allocated (`status.resourcesStatus`, the
  pod-group-controller's sums over its active pods), so a finished job's leftover condition
  does not count. The scheduler records an `Unschedulable` or `NotReady` Event on each pending
  group at every cycle (pkg/scheduler/framework/session.go, cache/status_updater/
  default_status_updater.go `RecordJobStatusEvent`; source component `--scheduler-name`,
  cache/cache.go), and rewrites a scheduling condition only when it changes
  (`setPodGroupSchedulingCondition`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core import conditions as c
from bot.core.models import ClusterSnapshot, RawObject
from bot.health import deployments
from bot.health import report as health
from bot.rules import kai
from bot.workloads.pending import is_stale
from bot.workloads.quantities import parse_quantity

NODE_POOL_LABEL = "kai.scheduler/node-pool"  # `global.nodePoolLabelKey`'s default
GroupName = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class SchedulerLease:
    """The Lease a shard's leader holds: who, and when it last renewed it."""

    namespace: str
    name: str
    holder: str
    renewed: datetime | None


@dataclass(frozen=True)
class ShardScheduler:
    """One shard's scheduler at a check: its Deployment, how many of its pods report Ready,
    its Lease (None without leader election, or when there is none), and its pending groups
    with the last moment it touched any of them (None: none is pending)."""

    shard: str
    namespace: str
    deployment: str
    ready: int
    replicas: int
    lease_name: str
    lease: SchedulerLease | None
    waiting: tuple[GroupName, ...]
    touched: datetime | None

    @property
    def elects(self) -> bool:
        """Whether it runs leader election (more than one replica), so holds a Lease."""
        return self.replicas > 1


def read_shards(
    snapshot: ClusterSnapshot,
    leases: Sequence[RawObject],
    groups: Sequence[RawObject],
    events: Sequence[RawObject],
) -> list[ShardScheduler]:
    """Every shard whose scheduler Deployment exists, as its scheduler shows itself."""
    namespace = health.operand_namespace(snapshot)
    scheduler = health.scheduler_name(snapshot)
    label = _node_pool_label(snapshot.kai_config)
    touches = event_times(events, scheduler)
    found = []
    for shard in sorted(snapshot.shards, key=c.object_name):
        name = health.shard_scheduler(scheduler, shard)
        deployment = _scheduler_deployment(snapshot, shard)
        if deployment is None:
            continue  # its own alert (`bot.alerts.rules`): the scheduler is missing
        mine = [g for g in groups if _in_shard(g, label, kai.partition_of(shard)) and waits(g)]
        lease_name = kai.scheduler_lease_name(scheduler, shard)
        found.append(
            ShardScheduler(
                shard=c.object_name(shard),
                namespace=namespace,
                deployment=name,
                ready=c.as_int(c.status(deployment).get("readyReplicas")) or 0,
                # The operator writes kai-config's `spec.scheduler.replicas` here, and turns
                # leader election on when it is above one (resources_for_shard.go).
                replicas=deployments.desired_replicas(deployment),
                lease_name=lease_name,
                lease=_lease(leases, namespace, lease_name),
                waiting=tuple(_name(g) for g in mine),
                touched=max((t for g in mine if (t := last_touch(g, touches))), default=None),
            )
        )
    return found


def elects_leaders(snapshot: ClusterSnapshot) -> bool:
    """Whether some shard's scheduler runs more than one replica, so holds a leader Lease."""
    found = (_scheduler_deployment(snapshot, shard) for shard in snapshot.shards)
    return any(d is not None and deployments.desired_replicas(d) > 1 for d in found)


def _scheduler_deployment(snapshot: ClusterSnapshot, shard: RawObject) -> RawObject | None:
    """The Deployment of a shard's scheduler (`<schedulerName>-<shard>`), None when absent."""
    name = health.shard_scheduler(health.scheduler_name(snapshot), shard)
    namespace = health.operand_namespace(snapshot)
    return deployments.find_deployment(snapshot.deployments, namespace, name)


def waits(group: RawObject) -> bool:
    """Pods of the group are requested and not all allocated: it waits for the scheduler."""
    requested = c.as_mapping(c.as_mapping(c.status(group).get("resourcesStatus")).get("requested"))
    wants = any((parse_quantity(v) or 0) > 0 for v in requested.values())
    return wants and not is_stale(group)


def last_touch(group: RawObject, touches: Mapping[GroupName, datetime]) -> datetime | None:
    """The last moment the scheduler showed it looked at the group: a scheduling condition
    written, an Event about it counted up; else the group's creation (nothing looked at it
    since it was made)."""
    written = [
        c.parse_timestamp(cond.get("lastTransitionTime"))
        for cond in c.status(group).get("schedulingConditions") or []
        if isinstance(cond, Mapping)
    ]
    moments = [m for m in (*written, touches.get(_name(group)), c.creation_time(group)) if m]
    return max(moments, default=None)


def event_times(events: Iterable[RawObject], scheduler: str) -> dict[GroupName, datetime]:
    """Per PodGroup, the newest Event the scheduler recorded about it: `lastTimestamp` (the
    core/v1 recorder counts a repeated Event up and moves it), `series.lastObservedTime` or
    `eventTime` (events.k8s.io/v1 writers)."""
    newest: dict[GroupName, datetime] = {}
    for event in events:
        involved = c.as_mapping(event.get("involvedObject"))
        source = c.as_text(c.as_mapping(event.get("source")).get("component"))
        by = source or c.as_text(event.get("reportingComponent"))
        if c.as_text(involved.get("kind")) != "PodGroup" or by != scheduler:
            continue
        at = _event_time(event)
        key = (c.as_text(involved.get("namespace")), c.as_text(involved.get("name")))
        if at is not None and (key not in newest or at > newest[key]):
            newest[key] = at
    return newest


def _event_time(event: RawObject) -> datetime | None:
    series = c.as_mapping(event.get("series"))
    moments = [
        c.parse_timestamp(event.get("lastTimestamp")),
        c.parse_timestamp(series.get("lastObservedTime")),
        c.parse_timestamp(event.get("eventTime")),
    ]
    return max((m for m in moments if m is not None), default=None)


def _lease(leases: Sequence[RawObject], namespace: str, name: str) -> SchedulerLease | None:
    lease = next(
        (x for x in leases if c.object_name(x) == name and c.object_namespace(x) == namespace),
        None,
    )
    if lease is None:
        return None
    spec = c.spec(lease)
    return SchedulerLease(
        namespace,
        name,
        c.as_text(spec.get("holderIdentity")),
        c.parse_timestamp(spec.get("renewTime")) or c.parse_timestamp(spec.get("acquireTime")),
    )


def _node_pool_label(config: RawObject | None) -> str:
    global_spec = c.as_mapping(c.spec(config or {}).get("global"))
    return c.as_text(global_spec.get("nodePoolLabelKey")) or NODE_POOL_LABEL


def _in_shard(group: RawObject, label: str, partition: str) -> bool:
    value = c.labels_of(group).get(label)
    return value is None if not partition else c.as_text(value) == partition


def _name(obj: RawObject) -> GroupName:
    return c.object_namespace(obj) or "", c.object_name(obj)
