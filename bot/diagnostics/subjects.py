"""What to diagnose: `kai`, `keda` or one Deployment, as `/kai diagnose` names it
(`subject_for_command`) and as an alert points at it.

Pure. `subject_for_alert` is how an alert's first thread reply picks its evidence (docs/design.md §2
"Alerts"): kai-config or a shard → the KAI operator and the Deployments its message names; the
APIService → the Service behind it; a Deployment (a shard's scheduler, the operator) → that one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from bot.config.settings import Settings
from bot.diagnostics.commands import Diagnose

# KAI's operator names failing operands as `Deployment [binder] is not available`
# (kai-scheduler.md: the DependenciesFulfilled and Available messages).
_NAMED_DEPLOYMENT = re.compile(r"Deployment \[([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\]")


@dataclass(frozen=True)
class KaiSubject:
    """The KAI operator, and every operand or shard scheduler that is not available."""

    namespace: str  # kai.namespace, where kai-operator runs
    named: tuple[str, ...] = ()  # Deployments a message names, diagnosed even if available

    def describe(self) -> str:
        return "kai"


@dataclass(frozen=True)
class KedaSubject:
    """The pods and endpoints behind the external-metrics APIService's `spec.service`."""

    apiservice: str

    def describe(self) -> str:
        return "keda"


@dataclass(frozen=True)
class DeploymentSubject:
    """One Deployment, by namespace and name."""

    namespace: str
    name: str

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"


Subject: TypeAlias = KaiSubject | KedaSubject | DeploymentSubject


def subject_for_command(parsed: Diagnose, settings: Settings) -> Subject:
    """What `diagnose` looks at: `kai` in kai.namespace, `keda` by keda.apiservice, or one."""
    if parsed.target == "kai":
        return KaiSubject(settings.kai.namespace)
    if parsed.target == "keda":
        return KedaSubject(settings.keda.apiservice)
    return DeploymentSubject(parsed.namespace, parsed.name)


def deployments_named(message: str) -> tuple[str, ...]:
    """The Deployments a KAI condition message names (`Deployment [x] is not available`)."""
    return tuple(dict.fromkeys(m.group(1) for m in _NAMED_DEPLOYMENT.finditer(message)))


def subject_for_alert(
    kind: str, obj: str, message: str, *, kai_namespace: str, apiservice: str
) -> Subject | None:
    """The subject whose diagnosis goes first in an alert's thread, or None (nothing to look at,
    e.g. a cluster that cannot be reached).

    Args:
        kind, obj: the alert's kind and object (`AlertKey.kind`, `AlertKey.object`; a
            Deployment's object is `namespace/name`).
        message: the condition's message, which may name failing Deployments.
    """
    if kind in ("Config", "SchedulingShard"):
        return KaiSubject(kai_namespace, deployments_named(message))
    if kind == "APIService":
        return KedaSubject(obj or apiservice)
    if kind == "Deployment" and "/" in obj:
        namespace, _, name = obj.partition("/")
        return DeploymentSubject(namespace, name)
    return None


# Where KEDA installs itself (its Helm chart and release manifests: namespace `keda`, Services
# `keda-operator`, `keda-operator-metrics-apiserver`, `keda-admission-webhooks`).
KEDA_NAMESPACE = "keda"


def subject_for_labels(
    labels: Mapping[str, str], *, kai_namespace: str, apiservice: str
) -> Subject | None:
    """The component an Alertmanager alert's labels name, or None (docs/alertmanager.md):
    `namespace` KAI's (`kai.namespace`) or `job`/`service` a `kai-` Service → kai; `namespace`
    `keda` or a `keda-` Service → keda."""
    namespace = labels.get("namespace", "")
    services = [labels.get(k, "") for k in ("job", "service")]
    if namespace == kai_namespace or any(s.startswith("kai-") for s in services):
        return KaiSubject(kai_namespace)
    if namespace == KEDA_NAMESPACE or any(s.startswith("keda-") for s in services):
        return KedaSubject(apiservice)
    return None
