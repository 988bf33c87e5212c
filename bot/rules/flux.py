"""Health of Flux objects: HelmRelease, Kustomization and the source kinds (`*.toolkit.fluxcd.io`).

docs/design.md §2 "Flux objects' health": suspended first, then failure (`Stalled` True or `Ready`
False,
even while `Reconciling` is True: reason `ProgressingWithRetry` means a failed attempt is being
retried), then in-progress signals (`Reconciling`, a stale `status.observedGeneration`, `Ready`
Unknown), then Healthy; no conditions at all is Progressing; an OCI HelmRepository, never
reconciled, is Healthy ("static", see `_STATIC`). As Argo CD's Flux health checks rate it (argo-cd
resource_customizations/helm.toolkit.fluxcd.io/HelmRelease/testdata/degraded.yaml); the reason
is fluxcd/pkg apis/meta/conditions.go `ProgressingWithRetryReason`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core import conditions as c
from bot.core.models import Health, RawObject, Verdict

RETRYING = "ProgressingWithRetry"  # fluxcd/pkg apis/meta/conditions.go
KINDS_BY_GROUP = {
    "helm.toolkit.fluxcd.io": ("HelmRelease",),
    "kustomize.toolkit.fluxcd.io": ("Kustomization",),
    "source.toolkit.fluxcd.io": (
        "GitRepository",
        "HelmRepository",
        "OCIRepository",
        "HelmChart",
        "Bucket",
    ),
}


def evaluate_flux_object(obj: RawObject) -> Verdict:
    """The verdict for a Flux HelmRelease, Kustomization or source."""
    return c.make_verdict(obj, assess_flux_object(obj))


def assess_flux_object(obj: RawObject) -> c.Assessment:
    """Suspended, then Degraded, then Progressing, then Healthy (docs/design.md §2)."""
    if c.spec(obj).get("suspend") is True:
        return c.Assessment(Health.SUSPENDED, "suspended (spec.suspend: true)")
    if _is_never_reconciled(obj):
        return c.Assessment(Health.HEALTHY, _STATIC)
    conds = c.list_conditions(obj)
    if not conds:
        return c.Assessment(Health.PROGRESSING, _NOT_YET)
    return _assess_failure(conds) or _assess_progress(obj, conds) or _assess_outcome(obj, conds)


def _assess_failure(conds: Sequence[c.Condition]) -> c.Assessment | None:
    """Stalled True or Ready False: Degraded with Ready's words (Stalled's only when Ready has
    none to say), "retrying" when Flux retries."""
    ready = c.find_condition(conds, "Ready")
    stalled = c.find_condition(conds, "Stalled")
    if c.condition_status(ready) == "False":
        failed = c.assess_condition(Health.DEGRADED, ready)
    elif c.is_condition_true(stalled):
        failed = _stalled(stalled, ready)
    else:
        return None
    reconciling = c.find_condition(conds, "Reconciling")
    if c.is_condition_true(reconciling) and c.condition_reason(reconciling) == RETRYING:
        return c.Assessment(Health.DEGRADED, f"retrying: {failed.headline}", failed.detail)
    return failed


def _stalled(stalled: c.Condition | None, ready: c.Condition | None) -> c.Assessment:
    """Stalled True while Ready is not False (Flux sets both together, so this is a moment
    between two writes, or another tool's doing): the headline names both, the detail is
    Ready's message; Stalled's own only when Ready has no message."""
    if not c.condition_message(ready).strip():
        return c.assess_condition(Health.DEGRADED, stalled)
    said_stalled = c.assess_condition(Health.DEGRADED, stalled).headline
    said_ready = c.assess_condition(Health.DEGRADED, ready)
    headline = f"{said_stalled}, {said_ready.headline}"
    return c.Assessment(Health.DEGRADED, headline, said_ready.detail)


def _assess_progress(obj: RawObject, conds: Sequence[c.Condition]) -> c.Assessment | None:
    reconciling = c.find_condition(conds, "Reconciling")
    if c.is_condition_true(reconciling):
        return c.assess_condition(Health.PROGRESSING, reconciling)
    generation = c.object_generation(obj)
    observed = c.as_int(c.status(obj).get("observedGeneration"))
    if generation is not None and observed is not None and observed != generation:
        return c.Assessment(
            Health.PROGRESSING,
            f"status is from generation {observed}, object is at generation {generation}: "
            "the Flux controller has not reconciled the change yet",
        )
    ready = c.find_condition(conds, "Ready")
    if c.condition_status(ready) == "Unknown":
        return c.assess_condition(Health.PROGRESSING, ready)
    return None


def _assess_outcome(obj: RawObject, conds: Sequence[c.Condition]) -> c.Assessment:
    ready = c.find_condition(conds, "Ready")
    if c.is_condition_true(ready):
        assessment = c.assess_condition(Health.HEALTHY, ready)
        revision = _describe_revision(obj)
        headline = f"{assessment.headline}, {revision}" if revision else assessment.headline
        return c.Assessment(Health.HEALTHY, headline, assessment.detail)
    if ready is None:
        return c.Assessment(Health.PROGRESSING, "no Ready condition yet")
    return c.assess_condition(Health.PROGRESSING, ready)


def _describe_revision(obj: RawObject) -> str:
    status = c.status(obj)
    applied = c.as_text(status.get("lastAppliedRevision"))
    if applied:
        return f"applied revision {applied}"
    fetched = c.as_text(c.as_mapping(status.get("artifact")).get("revision"))
    return f"fetched revision {fetched}" if fetched else ""


_NOT_YET = "no status.conditions yet: the Flux controller has not reconciled it"
# One kind is static: source-controller never reconciles a HelmRepository of `type: oci`
# (fluxcd/source-controller internal/controller/helmrepository_controller.go `Reconcile` hands it
# to `migrationToStatic`; fluxcd/flux2 cmd/flux/reconcile.go `isStatic` refuses to reconcile it),
# so it has no status to judge. Healthy whatever it says, as Argo CD rates it (argo-cd
# resource_customizations/source.toolkit.fluxcd.io/HelmRepository/health.lua) and as the flux CLI
# calls it (docs/gitops.md "Verdicts").
_STATIC = (
    "static: Flux does not reconcile a HelmRepository of type oci (each HelmChart pulls its "
    "chart itself), so no status is expected"
)


def _is_never_reconciled(obj: RawObject) -> bool:
    """An OCI HelmRepository: source-controller never reconciles it, so it has no status."""
    return obj.get("kind") == "HelmRepository" and c.spec(obj).get("type") == "oci"
