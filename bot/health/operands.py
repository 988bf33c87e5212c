"""Which workloads the KAI operator owns (its operands), of any kind, and how each is judged.

An operand is a workload in kai-config's `spec.namespace` that either carries
`app.kubernetes.io/managed-by=kai-operator`, or `app=<its name>` with a name one of KAI's
releases gives an operand of that kind. Read from KAI-Scheduler's source per tag:
- v0.12.0 to v0.16.0 label operands only `app=<name>` (pkg/operator/operands/common/common.go
  `ObjectForKAIConfig`); v0.16.1 (#1779) and v0.17.0 add the managed-by label to Deployments
  (`DeploymentForKAIConfig`), never to DaemonSets (`DaemonSetForKAIConfig`);
- the Deployments: `admission`, `binder`, `node-scale-adjuster`, `podgroup-controller`,
  `pod-grouper`, `queue-controller` (pkg/operator/operands/*/resources.go, v0.12.0 to v0.17.0);
- the DaemonSet `numa-placement-exporter`, from v0.16.0
  (pkg/operator/operands/numa_placement_exporter/resources.go).
Shard schedulers (`<schedulerName>-<shard>`) are found by name apart. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.core import conditions
from bot.core.models import Finding, Health, RawObject
from bot.health import daemonsets, deployments

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_OPERATOR = "kai-operator"
APP_LABEL = "app"
APP_LABELLED_OPERANDS: dict[str, frozenset[str]] = {
    "Deployment": frozenset(
        {
            "admission",
            "binder",
            "node-scale-adjuster",
            "podgroup-controller",
            "pod-grouper",
            "queue-controller",
        }
    ),
    "DaemonSet": frozenset({"numa-placement-exporter"}),
}


@dataclass(frozen=True)
class Operand:
    """One workload the KAI operator owns, with its kind (listed objects carry none)."""

    kind: str  # Deployment or DaemonSet
    workload: RawObject

    @property
    def name(self) -> str:
        return conditions.object_name(self.workload)

    def subject(self, namespace: str) -> str:
        """How a report names it: `Deployment kai-scheduler/binder`."""
        return f"{self.kind} {namespace}/{self.name}"


def find_operands(
    namespace: str,
    *,
    deployments: Iterable[RawObject] = (),
    daemonsets: Iterable[RawObject] = (),
) -> list[Operand]:
    """The workloads the KAI operator built in `namespace`, by either release's labels."""
    listed = [("Deployment", d) for d in deployments] + [("DaemonSet", d) for d in daemonsets]
    return [
        Operand(kind, w)
        for kind, w in listed
        if conditions.object_namespace(w) == namespace and is_operand(w, kind)
    ]


def is_operand(workload: RawObject, kind: str = "Deployment") -> bool:
    """Whether the KAI operator built this workload of `kind`."""
    labels = conditions.labels_of(workload)
    if labels.get(MANAGED_BY_LABEL) == MANAGED_BY_OPERATOR:
        return True
    name = conditions.object_name(workload)
    return name in APP_LABELLED_OPERANDS.get(kind, frozenset()) and labels.get(APP_LABEL) == name


def assess_operand(operand: Operand) -> conditions.Assessment:
    """Available as KAI counts it, by the workload's kind."""
    if operand.kind == "DaemonSet":
        return daemonsets.assess_daemonset(operand.workload)
    return deployments.assess_deployment(operand.workload, as_kai=True)


def assess_operands(found: Iterable[Operand], namespace: str) -> list[Finding]:
    """One Healthy finding naming the available operands, plus one finding per other operand."""
    healthy: list[Operand] = []
    findings: list[Finding] = []
    for operand in sorted(found, key=lambda o: o.name):
        reading = assess_operand(operand)
        if reading.health is Health.HEALTHY:
            healthy.append(operand)
            continue
        subject = operand.subject(namespace)
        findings.append(Finding(subject, reading.health, reading.headline, reading.detail))
    if not healthy and not findings:
        summary = (
            f"none found: no Deployment or DaemonSet labelled "
            f"{MANAGED_BY_LABEL}={MANAGED_BY_OPERATOR}, nor {APP_LABEL}=<name> for a KAI "
            "operand name"
        )
        return [Finding(f"KAI operands in {namespace}", Health.DEGRADED, summary)]
    if healthy:
        findings.insert(0, Finding(f"KAI operands in {namespace}", Health.HEALTHY, _named(healthy)))
    return findings


def _named(available: list[Operand]) -> str:
    """`5 Deployments available: admission, binder, ...`, or, with a DaemonSet among them,
    `6 workloads available: admission, ..., numa-placement-exporter (DaemonSet), ...`."""
    if all(o.kind == "Deployment" for o in available):
        noun = "Deployment" if len(available) == 1 else "Deployments"
        names = [o.name for o in available]
    else:
        noun = "workload" if len(available) == 1 else "workloads"
        names = [o.name if o.kind == "Deployment" else f"{o.name} ({o.kind})" for o in available]
    return f"{len(available)} {noun} available: {', '.join(names)}"
