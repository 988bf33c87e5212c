"""The GitOps resource types the bot reconciles: Flux (toolkit.fluxcd.io) and Argo CD Applications.

Pure data beside `bot.kube.kinds`, at the API versions docs/design.md §2 names (Flux v2.8 removed
the betas).
"""

from __future__ import annotations

from bot.kube import kinds
from bot.kube.kinds import ResourceRef

HELM_RELEASE = ResourceRef("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease", True)
KUSTOMIZATION = kinds.KUSTOMIZATION  # the alert checks follow it too (`bot.alerts.seen`)
GIT_REPOSITORY = ResourceRef(
    "source.toolkit.fluxcd.io", "v1", "gitrepositories", "GitRepository", True
)
HELM_REPOSITORY = ResourceRef(
    "source.toolkit.fluxcd.io", "v1", "helmrepositories", "HelmRepository", True
)
OCI_REPOSITORY = ResourceRef(
    "source.toolkit.fluxcd.io", "v1", "ocirepositories", "OCIRepository", True
)
HELM_CHART = ResourceRef("source.toolkit.fluxcd.io", "v1", "helmcharts", "HelmChart", True)
BUCKET = ResourceRef("source.toolkit.fluxcd.io", "v1", "buckets", "Bucket", True)
APPLICATION = ResourceRef("argoproj.io", "v1alpha1", "applications", "Application", True)
APP_PROJECT = ResourceRef("argoproj.io", "v1alpha1", "appprojects", "AppProject", True)

FLUX: dict[str, ResourceRef] = {
    ref.kind: ref
    for ref in (
        HELM_RELEASE,
        KUSTOMIZATION,
        GIT_REPOSITORY,
        HELM_REPOSITORY,
        OCI_REPOSITORY,
        HELM_CHART,
        BUCKET,
    )
}
BY_KIND: dict[str, ResourceRef] = {**FLUX, APPLICATION.kind: APPLICATION}
