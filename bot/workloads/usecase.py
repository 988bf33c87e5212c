"""The reads behind `/kai queues`, `/kai pending` and `/kai why`; decisions are the pure modules'.

`queues`: one list of Queues. `pending`: one list of PodGroups (paged), in a namespace or across
the cluster, no pods read (staleness comes from the group's own `resourcesStatus`). `why`: the pod
and kai-config, then its PodGroup, BindRequest and events, then its Queue: six requests.
`starvation`: one list of Queues and, with the rule on, one of PodGroups across the cluster.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from bot.core import conditions, errors
from bot.health import report
from bot.kube import kinds
from bot.kube.ports import KubeReader
from bot.workloads import pending, queues, starvation, why
from bot.workloads.pending import PendingGroup
from bot.workloads.starvation import QueueStarvation


async def read_starvation(kube: KubeReader, *, now: datetime, after: timedelta) -> QueueStarvation:
    """Every Queue, and which are starved at `now` (`after` 0: the rule is off, and no PodGroup
    is read) or over quota: one list of each, whatever the number of queues or groups.

    Raises:
        KubeError: unreachable, or a list is forbidden (KubeNotFound: KAI's CRDs are not served).
    """
    if after <= timedelta(0):
        rows = queues.queue_rows(await kube.list_objects(kinds.QUEUE))
        return starvation.judge(rows, (), now=now, after=after)
    queue_objects, groups = await asyncio.gather(
        kube.list_objects(kinds.QUEUE), kube.list_objects(kinds.POD_GROUP)
    )
    found, _stale = pending.read_pending(groups)
    return starvation.judge(queues.queue_rows(queue_objects), found, now=now, after=after)


async def read_pending(
    kube: KubeReader, namespace: str | None
) -> tuple[list[PendingGroup], int, int]:
    """The pending groups (oldest first), how many stale ones were left out, and how many
    PodGroups were read in all.

    Raises:
        UserError: the namespace does not exist (a list there would read as "nothing pending").
        KubeError: unreachable, or the PodGroup list is forbidden.
    """
    groups = await kube.list_objects(kinds.POD_GROUP, namespace)
    if namespace and not groups and not await _namespace_exists(kube, namespace):
        raise errors.UserError(
            f"Namespace {namespace} does not exist on {kube.cluster}, so nothing there can wait "
            "for the KAI scheduler. Check the name (`kubectl get namespaces` lists them)."
        )
    found, stale = pending.read_pending(groups)
    return found, stale, len(groups)


async def explain_pod(
    kube: KubeReader, namespace: str, name: str, *, command: str
) -> why.Explanation:
    """Why the pod is not running (or that it is, or that KAI does not schedule it); the advice
    names `command`, the configured slash command.

    Raises:
        UserError: the pod does not exist. KubeError: unreachable or forbidden.
    """
    pod, config = await asyncio.gather(
        kube.get_object(kinds.POD, name, namespace),
        kube.get_object(kinds.KAI_CONFIG, report.KAI_CONFIG_NAME),
    )
    if pod is None:
        raise errors.UserError(f"Pod {namespace}/{name} was not found on {kube.cluster}.")
    global_spec = conditions.as_mapping(conditions.spec(config or {}).get("global"))
    scheduler = (
        conditions.as_text(global_spec.get("schedulerName")) or report.DEFAULT_SCHEDULER_NAME
    )
    if conditions.as_text(conditions.spec(pod).get("schedulerName")) != scheduler:
        return why.explain(
            pod,
            kai_scheduler=scheduler,
            group=None,
            queue=None,
            bind_request=None,
            events=(),
            command=command,
        )
    group_name = conditions.as_text(conditions.annotations_of(pod).get(why.POD_GROUP_ANNOTATION))
    on_pod = f"involvedObject.kind=Pod,involvedObject.name={name}"
    group, bind_request, events = await asyncio.gather(
        kube.get_object(kinds.POD_GROUP, group_name, namespace) if group_name else _none(),
        kube.get_object(kinds.BIND_REQUEST, name, namespace),
        kube.list_objects(kinds.EVENT, namespace, field_selector=on_pod, page_size=None),
    )
    queue_name = conditions.as_text(conditions.spec(group).get("queue")) if group else ""
    queue = await kube.get_object(kinds.QUEUE, queue_name) if queue_name else None
    return why.explain(
        pod,
        kai_scheduler=scheduler,
        group=group,
        queue=queue,
        bind_request=bind_request,
        events=events,
        command=command,
    )


async def _namespace_exists(kube: KubeReader, namespace: str) -> bool:
    """Whether the namespace exists; a read that is refused counts as yes (nothing to say)."""
    try:
        return await kube.get_object(kinds.NAMESPACE, namespace) is not None
    except errors.KubeForbidden:
        return True


async def _none() -> None:
    return None
