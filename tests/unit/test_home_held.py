"""The Home tab's "Paused and suspended" part (docs/design.md §2 "Home tab"): which objects are
held, read as KEDA and Flux read them, with our record; in which order; what a cluster that
cannot be listed, or does not serve the kind at all, leaves on the tab; and each line's words.

Tables over objects as the API server returns them; the reads go through an in-memory cluster
that answers each (kind, namespace) list as told and records it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core import errors
from bot.core.models import RawObject
from bot.home import assemble, usecase
from bot.home.model import HeldObject, Home
from bot.home.render import home_view
from bot.kube.kinds import ResourceRef

NOW = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)
SJ = ResourceRef("keda.sh", "v1alpha1", "scaledjobs", "ScaledJob", True)
SO = ResourceRef("keda.sh", "v1alpha1", "scaledobjects", "ScaledObject", True)
HR = ResourceRef("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease", True)
RECORD = {
    "autoscaling.keda.sh/paused": "true",
    "kai-chatops/paused-by": "U0OPS",
    "kai-chatops/paused-at": "2026-08-24T10:00:00Z",
    "kai-chatops/pause-reason": "node drain",
    "kai-chatops/pause-until": "2026-08-24T14:00:00Z",
}


def obj(kind: str, name: str, annotations: dict[str, str] | None = None, **spec: Any) -> RawObject:
    metadata: dict[str, Any] = {"name": name, "namespace": "annia"}
    if annotations:
        metadata["annotations"] = annotations
    return {"kind": kind, "metadata": metadata, "spec": spec}


def test_paused_keda_objects_are_held_with_our_record_and_the_others_are_not() -> None:
    objs = [
        obj("ScaledJob", "worker", RECORD),
        obj("ScaledObject", "api", {"autoscaling.keda.sh/paused-replicas": "0"}),
        obj("ScaledJob", "idle", {"autoscaling.keda.sh/paused": "false"}),
        obj("ScaledObject", "free"),
    ]

    held = assemble.paused_objects(objs, "prod")

    assert held == [
        HeldObject(
            "paused", "ScaledJob", "annia", "worker", "prod", "U0OPS", "2026-08-24T10:00:00Z",
            "node drain", "2026-08-24T14:00:00Z",
        ),
        HeldObject("paused", "ScaledObject", "annia", "api", "prod"),
    ]  # fmt: skip


def test_suspended_flux_objects_are_held_with_our_record_and_the_others_are_not() -> None:
    record = {
        "kai-chatops/suspended-by": "U0OPS",
        "kai-chatops/suspended-at": "2026-08-24T10:00:00Z",
        "kai-chatops/suspend-reason": "hotfix",
        "kai-chatops/suspend-until": "2026-08-24T13:00:00Z",
    }
    objs = [
        obj("HelmRelease", "keda", record, suspend=True),
        obj("Kustomization", "apps", suspend=True),
        obj("HelmRelease", "kai", record, suspend=False),
        obj("GitRepository", "src", suspend="true"),  # not a boolean: Flux does not suspend it
    ]

    held = assemble.suspended_objects(objs, "prod")

    assert held == [
        HeldObject(
            "suspended", "HelmRelease", "annia", "keda", "prod", "U0OPS", "2026-08-24T10:00:00Z",
            "hotfix", "2026-08-24T13:00:00Z",
        ),
        HeldObject("suspended", "Kustomization", "annia", "apps", "prod"),
    ]  # fmt: skip


def test_held_objects_are_grouped_by_cluster_then_what_kind_namespace_and_name() -> None:
    def held(cluster: str, what: Any, kind: str, namespace: str, name: str) -> HeldObject:
        return HeldObject(what, kind, namespace, name, cluster)

    given = [
        held("prod", "suspended", "HelmRelease", "flux-system", "keda"),
        held("lab", "suspended", "HelmRelease", "flux-system", "kai"),
        held("prod", "paused", "ScaledJob", "b", "x"),
        held("prod", "paused", "ScaledJob", "a", "y"),
        held("lab", "suspended", "HelmRelease", "flux-system", "a"),
        held("prod", "paused", "ScaledJob", "a", "b"),
        held("prod", "paused", "ScaledObject", "a", "a"),
    ]

    assert [(h.cluster, h.kind, h.namespace, h.name) for h in assemble.ordered(given)] == [
        ("lab", "HelmRelease", "flux-system", "a"),
        ("lab", "HelmRelease", "flux-system", "kai"),
        ("prod", "ScaledJob", "a", "b"),
        ("prod", "ScaledJob", "a", "y"),
        ("prod", "ScaledJob", "b", "x"),
        ("prod", "ScaledObject", "a", "a"),
        ("prod", "HelmRelease", "flux-system", "keda"),
    ]


@dataclass
class Cluster:
    """Lists by (kind, namespace): objects, or the error that place answers."""

    answers: dict[tuple[str, str | None], list[RawObject] | errors.KubeError]
    cluster: str = "prod"
    asked: list[tuple[str, str | None]] = field(default_factory=list)

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        raise AssertionError("lists only")

    async def list_objects(
        self, ref: ResourceRef, namespace: str | None = None, **_: Any
    ) -> list[RawObject]:
        self.asked.append((ref.kind, namespace))
        answer = self.answers.get((ref.kind, namespace), [])
        if isinstance(answer, errors.KubeError):
            raise answer
        return answer

    async def server_version(self) -> str:
        return "v1.31.0"


async def test_each_place_is_listed_once_and_what_is_held_comes_back() -> None:
    cluster = Cluster(
        {
            ("ScaledJob", "annia"): [obj("ScaledJob", "worker", RECORD)],
            ("HelmRelease", None): [obj("HelmRelease", "keda", suspend=True)],
        }
    )

    held, notes = await usecase.read_held(cluster, [(SJ, "annia"), (SO, "annia")], [(HR, None)])

    assert [(h.what, h.kind, h.name, h.cluster) for h in held] == [
        ("paused", "ScaledJob", "worker", "prod"),
        ("suspended", "HelmRelease", "keda", "prod"),
    ]
    assert notes == []
    assert cluster.asked == [
        ("ScaledJob", "annia"),
        ("ScaledObject", "annia"),
        ("HelmRelease", None),
    ]


async def test_a_kind_the_cluster_does_not_serve_is_nothing_held_and_no_note() -> None:
    # 404 on a list: the CRD is absent (Flux or KEDA not installed), not a failure to report.
    absent = errors.KubeNotFound("the server could not find the requested resource")
    cluster = Cluster({("ScaledJob", "annia"): absent, ("HelmRelease", None): absent})

    held, notes = await usecase.read_held(cluster, [(SJ, "annia")], [(HR, None)])

    assert (held, notes) == ([], [])


async def test_a_list_that_fails_otherwise_is_a_note_naming_the_cluster_kind_and_place() -> None:
    cluster = Cluster(
        {
            ("ScaledJob", "annia"): errors.KubeForbidden("forbidden"),
            ("HelmRelease", None): errors.KubeUnavailable("connection refused"),
            ("ScaledObject", "annia"): [obj("ScaledObject", "api", RECORD)],
        }
    )

    held, notes = await usecase.read_held(cluster, [(SJ, "annia"), (SO, "annia")], [(HR, None)])

    assert [h.name for h in held] == ["api"]
    assert notes == [
        "prod: cannot list scaledjobs.keda.sh in annia: forbidden",
        "prod: cannot list helmreleases.helm.toolkit.fluxcd.io in all namespaces: "
        "connection refused",
    ]


def held_lines(*held: HeldObject) -> list[str]:
    view = home_view(Home(now=NOW, clusters=(), held=held), "/kai")
    blocks = view["blocks"]
    assert isinstance(blocks, list)
    start = next(i for i, b in enumerate(blocks) if "Paused and suspended" in str(b))
    return [
        line
        for block in blocks[start + 1 :]
        if block["type"] == "section"
        for line in block["text"]["text"].splitlines()
    ][: len(held)]


@pytest.mark.parametrize(
    ("held", "line"),
    [
        pytest.param(
            HeldObject("paused", "ScaledJob", "annia", "w", "prod"),
            ":double_vertical_bar: *ScaledJob annia/w* on prod — paused by hand "
            "(no kai-chatops record)",
            id="by-hand",
        ),
        pytest.param(
            HeldObject(
                "suspended", "HelmRelease", "flux-system", "keda", "prod", "U0OPS",
                "2026-08-24T10:00:00Z", "hotfix", "2026-08-24T13:00:00Z",
            ),
            ":double_vertical_bar: *HelmRelease flux-system/keda* on prod — suspended by "
            "<@U0OPS> at 2026-08-24 10:00 UTC, until 2026-08-24 13:00 UTC: hotfix",
            id="timed-with-reason",
        ),
        pytest.param(
            HeldObject("paused", "ScaledObject", "annia", "api", "lab", "U0OPS"),
            ":double_vertical_bar: *ScaledObject annia/api* on lab — paused by <@U0OPS>, "
            "until resumed",
            id="until-resumed",
        ),
        pytest.param(
            HeldObject(
                "paused", "ScaledJob", "annia", "w", "prod", "ops <!here>", "yesterday", "",
                "soon",
            ),
            ":double_vertical_bar: *ScaledJob annia/w* on prod — paused by ops &lt;!here&gt; "
            "at yesterday, until soon",
            id="written-by-hand",
        ),
    ],
)  # fmt: skip
def test_each_held_line_says_who_when_until_and_why(held: HeldObject, line: str) -> None:
    assert held_lines(held) == [line]
