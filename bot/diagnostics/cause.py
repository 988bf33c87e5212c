"""Why an alert fired, put before its diagnosis (docs/design.md §2 "Diagnose"): the failing
condition's words and what it names, from the alert and the components already read.

Pure: takes the alert's facts and a `Diagnosis`, returns the diagnosis with its `Cause`; reads
nothing, no clock. A component that looks healthy is never the whole answer under an alert.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from bot.core.models import Health
from bot.core.redaction import redact
from bot.diagnostics.model import Cause, Component, Diagnosis, PodState
from bot.diagnostics.subjects import deployments_named

HEALTHY_UNDER_ALERT = "The components look healthy; the cause is the condition above."
MAX_NAMED = 5  # pods or addresses named on one line; the rest are counted


@dataclass(frozen=True)
class AlertFacts:
    """The firing alert: its object and condition (as `AlertKey` has them), reason, message."""

    kind: str
    object: str
    condition: str
    reason: str = ""
    message: str = ""


def explain(diagnosis: Diagnosis, alert: AlertFacts) -> Diagnosis:
    """`diagnosis` with the cause of `alert` first: the condition, then what it names."""
    if alert.kind == "APIService":
        line, names = condition_line(alert), _apiservice_names(diagnosis, alert)
    elif alert.kind == "Config" and alert.condition == "Missing":
        line, names = condition_line(alert), _gone_with_config(diagnosis)
    else:  # a KAI message names one operand a line: each line, with what it names
        line = condition_line(dataclasses.replace(alert, message=""))
        names = _named_operands(diagnosis, alert.message)
        line += ", saying:" if names else ""
    cause = Cause(line, _cause_health(alert.condition), tuple(names))
    return dataclasses.replace(diagnosis, cause=cause)


def condition_line(alert: AlertFacts) -> str:
    """`APIService v1beta1.external.metrics.k8s.io Available is not True (reason): message`."""
    subject = f"{alert.kind} {alert.object}"
    if alert.condition == "Missing":
        head = f"{subject} does not exist"
    elif alert.condition == "Progressing":
        head = f"{subject} stays Progressing"
    elif alert.condition == "Stalled":  # a Ready scheduler that schedules nothing
        head = f"{subject} has stopped scheduling"
    else:
        state = "False" if alert.condition == "DependenciesFulfilled" else "not True"
        head = f"{subject} {alert.condition} is {state}"
    reason = f" ({alert.reason})" if alert.reason else ""
    message = " ".join(redact(alert.message).split())
    return f"{head}{reason}: {message}" if message else f"{head}{reason}"


def _cause_health(condition: str) -> Health:
    if condition == "Missing":
        return Health.MISSING
    if condition == "Progressing":
        return Health.PROGRESSING
    return Health.DEGRADED


def _named_operands(diagnosis: Diagnosis, message: str) -> list[str]:
    """Each line of a KAI message (one per operand it names) with the state of the Deployment
    it names (`Deployment [binder] is not available`), as diagnosed."""
    named = []
    for line in (x.strip() for x in redact(message).splitlines()):
        if not line:
            continue
        states = [_deployment_state(diagnosis, name) for name in deployments_named(line)]
        named.append("; ".join([line, *states]))
    return named


def _deployment_state(diagnosis: Diagnosis, name: str) -> str:
    found = next((x for x in diagnosis.components if x.title.endswith(f"/{name}")), None)
    if found is None:
        return f"Deployment {name} was not looked at"
    return f"{found.title}: {found.health.value} — {found.summary}"


def _apiservice_names(diagnosis: Diagnosis, alert: AlertFacts) -> list[str]:
    """The Service in the APIService's `spec.service`, its EndpointSlices' ready addresses and
    its pods; or that there is none to look at."""
    if alert.condition == "Missing":
        return [
            f"APIService {alert.object} is gone, so nothing serves external metrics (the HPAs"
            " KEDA drives cannot read them); KEDA registers it on install."
        ]
    behind = next((x for x in diagnosis.components if x.endpoints is not None), None)
    if behind is None or behind.endpoints is None:
        return [x.summary for x in diagnosis.components if x.health is Health.MISSING] or list(
            diagnosis.notes
        )
    endpoints = behind.endpoints
    ready = _listed(list(endpoints.ready)) or "none"
    line = (
        f"Its spec.service, Service {endpoints.service}: {len(endpoints.ready)} ready"
        f" address(es) ({ready}) in {endpoints.slices} EndpointSlice(s)"
    )
    if endpoints.not_ready:
        line += f", {len(endpoints.not_ready)} not ready ({_listed(list(endpoints.not_ready))})"
    return [line, _pods_line(behind)]


def _pods_line(component: Component) -> str:
    if not component.pods:
        return f"Its pods ({component.title}): none"
    return f"Its pods ({component.title}): " + _listed([_pod_words(p) for p in component.pods])


def _pod_words(pod: PodState) -> str:
    return f"{pod.name} {pod.phase} {pod.ready_text} ready, {pod.restarts} restart(s)"


def _gone_with_config(diagnosis: Diagnosis) -> list[str]:
    """What went with a deleted Config: Kubernetes garbage-collects the operands it owned."""
    operands = diagnosis.operands
    if operands is None:
        return ["What goes with it: the operands it owned (Kubernetes garbage-collects them)."]
    if not operands:
        return ["What went with it: every operand Deployment it owned; none is left."]
    return [
        "What goes with it: the operand Deployments it owned, garbage-collected by Kubernetes;"
        f" still there: {_listed(list(operands))}"
    ]


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    hidden = len(items) - MAX_NAMED
    return f"{shown} and {hidden} more" if hidden > 0 else shown
