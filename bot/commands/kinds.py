"""The KIND words of the slash command (docs/design.md §1.3), shared by the features that read them:
`reconcile` and `list` take the GitOps kinds, `suspend` and `resume KIND` the Flux ones, `pause`,
`resume` and `list` the KEDA ones. Pure.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

PausableKind = Literal["ScaledJob", "ScaledObject"]
ReconcilableKind = Literal[
    "HelmRelease",
    "Kustomization",
    "GitRepository",
    "HelmRepository",
    "OCIRepository",
    "Application",
]
# The Flux kinds `suspend` and `resume KIND` take (as `flux suspend|resume`): not Application.
FluxKind = Literal[
    "HelmRelease",
    "Kustomization",
    "GitRepository",
    "HelmRepository",
    "OCIRepository",
]
ListKind: TypeAlias = ReconcilableKind | PausableKind

# Canonical kind, then the words that name it (case-insensitive), as docs/design.md §1.3 lists them.
FLUX_KIND_WORDS: tuple[tuple[FluxKind, str, str], ...] = (
    ("HelmRelease", "helmrelease", "hr"),
    ("Kustomization", "kustomization", "ks"),
    ("GitRepository", "gitrepository", "gitrepo"),
    ("HelmRepository", "helmrepository", "helmrepo"),
    ("OCIRepository", "ocirepository", "ocirepo"),
)
KIND_WORDS: tuple[tuple[ReconcilableKind, str, str], ...] = (
    *FLUX_KIND_WORDS,
    ("Application", "application", "app"),
)
KINDS: dict[str, ReconcilableKind] = {word: kind for kind, *words in KIND_WORDS for word in words}
# The kinds `suspend` and `resume KIND` take: the Flux words of `KINDS` (not Application).
FLUX_KINDS: dict[str, FluxKind] = {word: kind for kind, *words in FLUX_KIND_WORDS for word in words}
# `pause` and `resume` take the same KEDA words as `list` (issue 38: `pause sj` was refused).
PAUSE_KINDS: dict[str, PausableKind] = {
    "scaledjob": "ScaledJob",
    "sj": "ScaledJob",
    "scaledobject": "ScaledObject",
    "so": "ScaledObject",
}
LIST_KINDS: dict[str, ListKind] = {**KINDS, **PAUSE_KINDS}
# Each kind's short word, the one replies suggest (`/kai resume hr …`, `/kai list sj`).
SHORT_WORDS: dict[str, str] = {kind: short for kind, _, short in KIND_WORDS} | {
    "ScaledJob": "sj",
    "ScaledObject": "so",
}
# The first line of the KIND list in the usages of reconcile, suspend, resume and list; each goes on
# with its own kinds.
KIND_LINE = (
    "  KIND: helmrelease|hr, kustomization|ks, gitrepository|gitrepo, helmrepository|helmrepo,\n"
)


def short_word(kind: str) -> str:
    """The short word of `kind` (`hr` for HelmRelease); a kind without one, lower-cased."""
    return SHORT_WORDS.get(kind, kind.lower())


def listed(words: tuple[tuple[str, str, str], ...]) -> str:
    """`long|short, …`: the kinds an error message offers."""
    return ", ".join(f"{long}|{short}" for _, long, short in words)
