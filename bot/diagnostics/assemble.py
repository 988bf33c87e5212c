"""One component's diagnosis from what was read: a Deployment (or a Service's pods), its
ReplicaSets, pods and events. Pure; the log tail is read afterwards for the container
`log_target` names and attached with `with_log`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core import conditions
from bot.core.models import Health, RawObject
from bot.core.redaction import redact
from bot.diagnostics import evidence, selectors
from bot.diagnostics import pods as pod_rules
from bot.diagnostics.model import Component, Endpoints, LogTail, PodState
from bot.health import deployments


@dataclass(frozen=True)
class Namespace:
    """What was listed in one namespace: ReplicaSets, pods and Warning events."""

    replicasets: Sequence[RawObject]
    pods: Sequence[RawObject]
    events: Sequence[RawObject]


@dataclass(frozen=True)
class LogTarget:
    """The container whose log tail a component shows, and which instance."""

    pod: str
    container: str
    previous: bool


def deployment_title(namespace: str, name: str) -> str:
    return deployments.deployment_subject(namespace, name)


def missing(title: str, note: str = "") -> Component:
    """An object the diagnosis looked for and did not find (`Deployment ns/name`)."""
    return Component(title, Health.MISSING, f"{title} was not found {note}".strip())


def deployment_component(
    deployment: RawObject, found: Namespace, now: datetime, *, as_kai: bool = False
) -> Component:
    """A Deployment with its pods (by its selector), their findings and recent Warning events;
    `as_kai`: a KAI operand or shard scheduler, judged by KAI's own availability rule."""
    name, namespace = (
        conditions.object_name(deployment),
        conditions.object_namespace(deployment) or "",
    )
    title = deployment_title(namespace, name)
    selector = conditions.as_mapping(conditions.spec(deployment).get("selector"))
    owned = [rs for rs in found.replicasets if _is_owned(rs, deployment, selector)]
    pods = _states(p for p in found.pods if selectors.matches(selector, conditions.labels_of(p)))
    reading = deployments.assess_deployment(deployment, as_kai=as_kai)
    findings = pod_rules.all_findings(pods)
    if not pods:
        findings.append(pod_rules.no_pods_finding(title, deployments.desired_replicas(deployment)))
    involved = {("Deployment", name)} | {("ReplicaSet", conditions.object_name(rs)) for rs in owned}
    involved |= {("Pod", p.name) for p in pods}
    return Component(
        title=title,
        health=reading.health,
        summary=redact(reading.headline),  # a condition's message, in its words
        pods=pods,
        findings=tuple(findings),
        events=evidence.recent_warnings(found.events, involved, now),
    )


def service_component(
    title: str, found: Namespace, endpoints: Endpoints, now: datetime
) -> Component:
    """The pods behind a Service when no Deployment owns them: judged by their endpoints."""
    pods = _states(found.pods)
    involved = {("Pod", p.name) for p in pods}
    involved |= {("ReplicaSet", conditions.object_name(rs)) for rs in found.replicasets}
    health = Health.HEALTHY if endpoints.ready else Health.DEGRADED
    summary = f"{len(endpoints.ready)} ready endpoint(s), {len(pods)} pod(s)"
    return Component(
        title=title,
        health=health,
        summary=summary,
        pods=pods,
        findings=tuple(pod_rules.all_findings(pods)),
        events=evidence.recent_warnings(found.events, involved, now),
        endpoints=endpoints,
    )


def with_endpoints(component: Component, endpoints: Endpoints) -> Component:
    """The component with its Service's endpoints; none ready makes it Degraded."""
    health, summary = component.health, component.summary
    if not endpoints.ready:
        health = max(health, Health.DEGRADED, key=lambda h: h.rank)
        summary = f"{summary}; Service {endpoints.service} has no ready endpoint"
    return dataclasses.replace(component, health=health, summary=summary, endpoints=endpoints)


def log_target(component: Component) -> LogTarget | None:
    """The failing container to show the log of (its previous instance when it restarted)."""
    chosen = pod_rules.first_failing(component.pods)
    if chosen is None:
        return None
    pod, container = chosen
    return LogTarget(pod.name, container.name, container.has_previous)


def with_log(
    component: Component, target: LogTarget, text: str, unavailable: str = ""
) -> Component:
    """The component with the log tail read for `target` (or why it could not be read)."""
    lines = evidence.log_tail(text) if not unavailable else ()
    tail = LogTail(target.pod, target.container, target.previous, lines, unavailable)
    return dataclasses.replace(component, log=tail)


def _states(pods: Iterable[RawObject]) -> tuple[PodState, ...]:
    states = [pod_rules.read_pod(p) for p in pods]
    return tuple(sorted(states, key=lambda p: p.name))


def _is_owned(replicaset: RawObject, deployment: RawObject, selector: RawObject) -> bool:
    uid = conditions.metadata(deployment).get("uid")
    owners = conditions.metadata(replicaset).get("ownerReferences") or []
    if uid and any(o.get("uid") == uid for o in owners):
        return True
    return selectors.matches(selector, conditions.labels_of(replicaset))
