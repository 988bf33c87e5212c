"""`diagnose`: read what a diagnosis needs in a constant number of API requests, then judge it.

Per namespace: one list each of ReplicaSets, pods (by the Deployment's selector when there is one
Deployment) and Warning events (`fieldSelector=type=Warning`), whatever the number of pods; then
one `pods/log` read per unhealthy component. Decisions are `bot.diagnostics.assemble`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from bot.core import conditions, errors
from bot.core.models import RawObject
from bot.diagnostics import assemble, evidence, selectors
from bot.diagnostics.assemble import Namespace
from bot.diagnostics.model import Component, Diagnosis
from bot.diagnostics.subjects import DeploymentSubject, KaiSubject, KedaSubject, Subject
from bot.health import deployments, operands, report
from bot.kube import kinds
from bot.kube.ports import PodLogReader

WARNINGS = "type=Warning"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"  # how EndpointSlices name their Service


async def diagnose(kube: PodLogReader, subject: Subject, *, now: datetime) -> Diagnosis:
    """The diagnosis of `subject` on the gateway's cluster. Read-only.

    Raises:
        KubeError: the cluster is unreachable or forbids a read (the message names the grant).
    """
    notes: list[str] = []
    operands: tuple[str, ...] | None = None
    if isinstance(subject, DeploymentSubject):
        components = await _one_deployment(kube, subject, now)
    elif isinstance(subject, KaiSubject):
        components, notes, operands = await _kai(kube, subject, now)
    else:
        components, notes = await _keda(kube, subject, now)
    return Diagnosis(
        kube.cluster, subject.describe(), now, tuple(components), tuple(notes), operands=operands
    )


async def _one_deployment(
    kube: PodLogReader, subject: DeploymentSubject, now: datetime
) -> list[Component]:
    deployment = await kube.get_object(kinds.DEPLOYMENT, subject.name, subject.namespace)
    if deployment is None:
        title = assemble.deployment_title(subject.namespace, subject.name)
        return [assemble.missing(title)]
    selector = selectors.selector_text(
        conditions.as_mapping(conditions.spec(deployment).get("selector"))
    )
    found = await _read_namespace(kube, subject.namespace, selector)
    component = assemble.deployment_component(deployment, found, now)
    return [await _attach_log(kube, subject.namespace, component)]


async def _kai(
    kube: PodLogReader, subject: KaiSubject, now: datetime
) -> tuple[list[Component], list[str], tuple[str, ...]]:
    """kai-operator, plus every operand and shard scheduler not available, plus those named;
    and every operand Deployment found (`namespace/name`)."""
    config, shards, listed = await asyncio.gather(
        kube.get_object(kinds.KAI_CONFIG, report.KAI_CONFIG_NAME),
        kube.list_objects(kinds.SCHEDULING_SHARD, page_size=None),
        kube.list_objects(kinds.DEPLOYMENT, subject.namespace, page_size=None),
    )
    spec = conditions.spec(config or {})
    operand_namespace = conditions.as_text(spec.get("namespace")) or subject.namespace
    if operand_namespace != subject.namespace:
        listed += await kube.list_objects(kinds.DEPLOYMENT, operand_namespace, page_size=None)
    scheduler = conditions.as_text(conditions.as_mapping(spec.get("global")).get("schedulerName"))
    schedulers = {
        f"{scheduler or report.DEFAULT_SCHEDULER_NAME}-{conditions.object_name(s)}" for s in shards
    }
    wanted = _kai_deployments(listed, subject, operand_namespace, schedulers)
    components = await _several(kube, wanted, now)
    missing = [
        assemble.missing(assemble.deployment_title(ns, name))
        for ns, name in _expected(subject, operand_namespace, schedulers)
        if deployments.find_deployment(listed, ns, name) is None
    ]
    notes = (
        []
        if config is not None
        else [f"{report.KAI_CONFIG_NAME} is missing: the operator has nothing to reconcile"]
    )
    if len(wanted) == 1 and not missing:
        notes.append("Every KAI operand and shard scheduler is available.")
    owned = operands.find_operands(operand_namespace, deployments=listed)
    found = tuple(f"{operand_namespace}/{o.name}" for o in owned)
    return missing + components, notes, found


def _kai_deployments(
    listed: Sequence[RawObject], subject: KaiSubject, operand_namespace: str, schedulers: set[str]
) -> list[RawObject]:
    operator = deployments.find_deployment(listed, subject.namespace, report.OPERATOR_DEPLOYMENT)
    owned = [o.workload for o in operands.find_operands(operand_namespace, deployments=listed)]
    owned += [d for d in listed if conditions.object_name(d) in schedulers and d not in owned]
    chosen = [operator] if operator is not None else []
    for deployment in sorted(owned, key=conditions.object_name):
        named = conditions.object_name(deployment) in subject.named
        if deployment is not operator and (named or not _is_available(deployment)):
            chosen.append(deployment)
    return chosen


def _expected(
    subject: KaiSubject, operand_namespace: str, schedulers: set[str]
) -> list[tuple[str, str]]:
    """The Deployments a KAI install must have: the operator and each shard's scheduler."""
    expected = [(subject.namespace, report.OPERATOR_DEPLOYMENT)]
    return expected + [(operand_namespace, name) for name in sorted(schedulers)]


def _is_available(deployment: RawObject) -> bool:
    """As KAI judges its operands and shard schedulers (every replica updated, Available)."""
    return deployments.assess_deployment(deployment, as_kai=True).health.is_healthy


async def _several(
    kube: PodLogReader, chosen: Sequence[RawObject], now: datetime
) -> list[Component]:
    """Several Deployments of KAI: one set of lists per namespace, matched to each in memory;
    all but the operator judged as KAI judges its operands and shard schedulers."""
    namespaces = sorted({conditions.object_namespace(d) or "" for d in chosen})
    read = await asyncio.gather(*(_read_namespace(kube, ns, "") for ns in namespaces))
    found = dict(zip(namespaces, read, strict=True))
    components = [
        assemble.deployment_component(
            d,
            found[conditions.object_namespace(d) or ""],
            now,
            as_kai=conditions.object_name(d) != report.OPERATOR_DEPLOYMENT,
        )
        for d in chosen
    ]
    return list(
        await asyncio.gather(
            *(
                _attach_log(kube, conditions.object_namespace(d) or "", x)
                for d, x in zip(chosen, components, strict=True)
            )
        )
    )


async def _keda(
    kube: PodLogReader, subject: KedaSubject, now: datetime
) -> tuple[list[Component], list[str]]:
    """The Deployment whose pods the APIService's Service selects, and that Service's endpoints."""
    apiservice = await kube.get_object(kinds.APISERVICE, subject.apiservice)
    if apiservice is None:
        return [], [
            f"APIService {subject.apiservice} does not exist: KEDA registers it on install."
        ]
    ref = conditions.as_mapping(conditions.spec(apiservice).get("service"))
    namespace, name = conditions.as_text(ref.get("namespace")), conditions.as_text(ref.get("name"))
    if not name:
        return [], [f"APIService {subject.apiservice} has no spec.service: it is served locally."]
    notes = [f"APIService {subject.apiservice} is served by Service {namespace}/{name}."]
    service = await kube.get_object(kinds.SERVICE, name, namespace)
    if service is None:
        missing = assemble.missing(f"Service {namespace}/{name}", "(ServiceNotFound)")
        return [missing], notes
    selector = selectors.service_selector(
        conditions.as_mapping(conditions.spec(service).get("selector"))
    )
    if not conditions.as_mapping(selector.get("matchLabels")):
        notes.append(
            f"Service {namespace}/{name} has no selector: its EndpointSlices are managed by hand."
        )
    text = selectors.selector_text(selector)
    listed, found, slices = await asyncio.gather(
        kube.list_objects(kinds.DEPLOYMENT, namespace, page_size=None),
        _read_namespace(kube, namespace, text),
        kube.list_objects(
            kinds.ENDPOINT_SLICE,
            namespace,
            label_selector=f"{SERVICE_NAME_LABEL}={name}",
            page_size=None,
        ),
    )
    endpoints = evidence.read_endpoints(f"{namespace}/{name}", slices)
    backing = next((d for d in listed if _selects(selector, d)), None)
    if backing is None:
        component = assemble.service_component(
            f"Pods of Service {namespace}/{name}", found, endpoints, now
        )
    else:
        component = assemble.with_endpoints(
            assemble.deployment_component(backing, found, now), endpoints
        )
    return [await _attach_log(kube, namespace, component)], notes


def _selects(selector: RawObject, deployment: RawObject) -> bool:
    """Whether a Service's selector picks this Deployment's pods (its template's labels)."""
    template = conditions.as_mapping(conditions.spec(deployment).get("template"))
    return selectors.matches(
        selector,
        conditions.as_mapping(conditions.as_mapping(template.get("metadata")).get("labels")),
    )


async def _read_namespace(kube: PodLogReader, namespace: str, selector: str) -> Namespace:
    """ReplicaSets and pods (by `selector`, "" for all) and the Warning events of a namespace.

    Unpaged: one request each whatever the count (pods of one Deployment, or of the KAI
    namespace), so the cost of a diagnosis does not grow with the pods.
    """
    chosen = selector or None
    replicasets, pods, events = await asyncio.gather(
        kube.list_objects(kinds.REPLICA_SET, namespace, label_selector=chosen, page_size=None),
        kube.list_objects(kinds.POD, namespace, label_selector=chosen, page_size=None),
        kube.list_objects(kinds.EVENT, namespace, field_selector=WARNINGS, page_size=None),
    )
    return Namespace(replicasets, pods, events)


async def _attach_log(kube: PodLogReader, namespace: str, component: Component) -> Component:
    """The component with the log tail of its failing container, or why there is none."""
    target = assemble.log_target(component)
    if target is None:
        return component
    try:
        text = await kube.read_pod_log(
            namespace,
            target.pod,
            container=target.container,
            previous=target.previous,
            tail_lines=evidence.LOG_LINES,
        )
    except errors.KubeForbidden as e:
        return assemble.with_log(component, target, "", f"not allowed to read its log: {e}")
    except errors.KubeError as e:
        return assemble.with_log(component, target, "", f"no log: {e}")
    return assemble.with_log(component, target, text)
