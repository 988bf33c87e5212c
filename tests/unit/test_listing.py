"""`/kai list KIND` and the "objects of that name elsewhere" hint (docs/design.md §2 "List"): which
objects are read and shown, in which order, and how the reply reads within Slack's limits.

Tables over an in-memory cluster that answers lists as the API server does (by namespace, or
across the cluster; `fieldSelector=metadata.name=` by name) and records what it was asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.core import errors
from bot.core.models import Health, RawObject, Verdict
from bot.kube.kinds import ResourceRef
from bot.listing import render
from bot.listing.model import Found
from bot.listing.order import worst_first_key
from bot.listing.usecase import find_named, list_verdicts

HR = ResourceRef("helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease", True)
KS = ResourceRef("kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization", True)
APP = ResourceRef("argoproj.io", "v1alpha1", "applications", "Application", True)


def release(namespace: str, name: str, ready: str = "True", message: str = "ok") -> RawObject:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace, "generation": 1},
        "spec": {"interval": "10m"},
        "status": {
            "observedGeneration": 1,
            "conditions": [
                {"type": "Ready", "status": ready, "reason": "R", "message": message,
                 "observedGeneration": 1}
            ],
        },
    }  # fmt: skip


@dataclass
class Cluster:
    """Objects by resource type; answers lists as the API server does, and records them."""

    objects: dict[ResourceRef, list[RawObject]]
    cluster: str = "prod"
    refusing: set[tuple[ResourceRef, str]] = field(default_factory=set)
    asked: list[dict[str, Any]] = field(default_factory=list)

    async def get_object(
        self, ref: ResourceRef, name: str, namespace: str | None = None
    ) -> RawObject | None:
        raise AssertionError("lists only")

    async def list_objects(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        page_size: int | None = 500,
    ) -> list[RawObject]:
        self.asked.append(
            {"ref": ref.kind, "namespace": namespace, "fields": field_selector,
             "metadata_only": metadata_only, "page_size": page_size}
        )  # fmt: skip
        if (ref, namespace or "") in self.refusing:
            raise errors.KubeForbidden(f"{ref.qualified} is forbidden")
        found = [
            o
            for o in self.objects.get(ref, [])
            if namespace is None or o["metadata"].get("namespace", namespace) == namespace
        ]
        if field_selector is not None:
            wanted = field_selector.removeprefix("metadata.name=")
            found = [o for o in found if o["metadata"]["name"] == wanted]
        return found

    async def server_version(self) -> str:
        return "v1.31.0"


RELEASES = [
    release("flux-system", "kai-scheduler"),
    release("flux-system", "keda", "False", "upgrade failed"),
    release("apps", "podinfo"),
    release("apps", "keda"),
]


async def test_a_list_in_a_namespace_shows_only_that_namespace_worst_first() -> None:
    cluster = Cluster({HR: RELEASES})

    shown = [listed.verdict for listed in await list_verdicts(cluster, HR, ["flux-system"])]

    assert [(v.namespace, v.name, v.health) for v in shown] == [
        ("flux-system", "keda", Health.DEGRADED),
        ("flux-system", "kai-scheduler", Health.HEALTHY),
    ]
    assert [(a["ref"], a["namespace"]) for a in cluster.asked] == [("HelmRelease", "flux-system")]


async def test_a_list_in_several_namespaces_reads_each_once_and_all_namespaces_with_one() -> None:
    cluster = Cluster({HR: RELEASES})

    several = [x.verdict for x in await list_verdicts(cluster, HR, ["apps", "flux-system"])]
    everywhere = [x.verdict for x in await list_verdicts(cluster, HR, None)]

    assert [(v.namespace, v.name) for v in several] == [
        ("flux-system", "keda"),
        ("apps", "keda"),
        ("apps", "podinfo"),
        ("flux-system", "kai-scheduler"),
    ]
    assert several == everywhere
    assert [a["namespace"] for a in cluster.asked] == ["apps", "flux-system", None]


async def test_objects_of_the_name_are_found_in_each_place_once_and_by_name_only() -> None:
    apps = [
        {"kind": "Application", "metadata": {"name": "keda", "namespace": "argocd"}},
        {"kind": "Application", "metadata": {"name": "kai", "namespace": "argocd"}},
    ]
    cluster = Cluster({HR: RELEASES, APP: apps})
    places = [(HR, "flux-system"), (HR, "apps"), (HR, "flux-system"), (KS, "flux-system")]

    found = await find_named(cluster, "keda", [*places, (APP, "argocd")])

    assert found == [
        Found("HelmRelease", "flux-system", "keda"),
        Found("HelmRelease", "apps", "keda"),
        Found("Application", "argocd", "keda"),
    ]
    assert [(a["ref"], a["namespace"]) for a in cluster.asked] == [
        ("HelmRelease", "flux-system"),
        ("HelmRelease", "apps"),
        ("Kustomization", "flux-system"),
        ("Application", "argocd"),
    ]  # each place once
    assert {(a["fields"], a["metadata_only"], a["page_size"]) for a in cluster.asked} == {
        ("metadata.name=keda", True, None)
    }


async def test_a_lookup_keeps_only_the_name_asked_even_from_a_server_that_ignores_the_filter() -> (
    None
):
    class Unfiltered(Cluster):
        async def list_objects(self, ref: ResourceRef, namespace: str | None = None,
                               **_: Any) -> list[RawObject]:  # fmt: skip
            return await super().list_objects(ref, namespace)

    found = await find_named(Unfiltered({HR: RELEASES}), "podinfo", [(HR, "apps")])

    assert found == [Found("HelmRelease", "apps", "podinfo")]


async def test_a_place_that_cannot_be_read_is_skipped_and_the_others_still_answer() -> None:
    cluster = Cluster({HR: RELEASES}, refusing={(HR, "flux-system")})
    bare = [{"metadata": {"name": "keda"}}]  # a metadata-only item may omit its namespace
    cluster.objects[KS] = bare

    found = await find_named(cluster, "keda", [(HR, "flux-system"), (HR, "apps"), (KS, "ops")])

    assert found == [Found("HelmRelease", "apps", "keda"), Found("Kustomization", "ops", "keda")]


def verdict(name: str, health: Health, namespace: str | None = "ns", message: str = "") -> Verdict:
    return Verdict("HelmRelease", namespace, name, health, message or health.value)


def test_worst_first_then_namespace_then_name() -> None:
    verdicts = [
        verdict("b", Health.HEALTHY, "a"),
        verdict("a", Health.HEALTHY, "b"),
        verdict("z", Health.DEGRADED, "z"),
        verdict("c", Health.MISSING, None),
        verdict("a", Health.HEALTHY, "a"),
        verdict("z", Health.HEALTHY, None),  # cluster-scoped: before every namespace
    ]

    assert [(v.namespace, v.name) for v in sorted(verdicts, key=worst_first_key)] == [
        (None, "c"),
        ("z", "z"),
        (None, "z"),
        ("a", "a"),
        ("a", "b"),
        ("b", "a"),
    ]


def test_an_empty_list_says_there_is_none_where_it_looked() -> None:
    message = render.list_message([], kind="HelmReleases", cluster="prod", scope="namespace apps")

    assert (
        message["text"]
        == "HelmReleases on prod: namespace apps\nNo HelmReleases in namespace apps on prod."
    )
    assert [b["type"] for b in message["blocks"]] == ["header", "section"]


def test_a_list_counts_by_verdict_and_shows_a_line_per_object() -> None:
    verdicts = [
        verdict("keda", Health.DEGRADED, message="upgrade\nfailed"),
        verdict("kai", Health.HEALTHY),
        verdict("cluster-wide", Health.HEALTHY, None),
    ]

    rows = [render.ObjectRow(v) for v in verdicts]
    message = render.list_message(rows, kind="HelmReleases", cluster="prod", scope="all")

    assert message["text"].splitlines() == [
        "HelmReleases on prod: all",
        "3 objects: 1 Degraded · 2 Healthy",
        "ns/keda: Degraded — upgrade failed",
        "ns/kai: Healthy — Healthy",
        "cluster-wide: Healthy — Healthy",
    ]
    assert render.count_text([verdicts[1]]) == "1 object: 1 Healthy"
    assert str(render.object_line(rows[0], md=True)) == (
        ":red_circle: *ns/keda*: Degraded — upgrade failed"
    )


def test_a_long_message_of_one_object_is_cut() -> None:
    line = render.object_line(render.ObjectRow(verdict("x", Health.DEGRADED, message="m" * 1000)))

    assert line.startswith("ns/x: Degraded — mmm") and len(line) < 350


def test_what_did_not_fit_is_counted_by_verdict_with_the_hint() -> None:
    left = [
        verdict("a", Health.HEALTHY),
        verdict("b", Health.HEALTHY),
        verdict("c", Health.PROGRESSING),
    ]

    text = render.left_out_text(left, "`/kai list hr NAMESPACE` narrows it.")

    assert text == (
        "3 more not shown, too many for one Slack message (1 Progressing, 2 Healthy). "
        "`/kai list hr NAMESPACE` narrows it."
    )
    assert render.left_out_text(left[:1], "").endswith("(1 Healthy).")


@pytest.mark.parametrize(
    ("count", "tail"),
    [
        pytest.param(0, "", id="none"),
        pytest.param(1, "HelmRelease ns0/keda (`/kai reconcile hr ns0/keda`).", id="one"),
        pytest.param(5, "HelmRelease ns4/keda (`/kai reconcile hr ns4/keda`).", id="five"),
        pytest.param(6, "(`/kai reconcile hr ns4/keda`) and 1 more.", id="six"),
        pytest.param(7, "(`/kai reconcile hr ns4/keda`) and 2 more.", id="seven"),
    ],
)
def test_the_elsewhere_hint_names_up_to_five_with_their_command(count: int, tail: str) -> None:
    found = [Found("HelmRelease", f"ns{i}", "keda") for i in range(count)]

    text = render.elsewhere_text(found, "keda", lambda f: f"/kai reconcile hr {f.namespace}/keda")

    if not count:
        assert text == ""
        return
    assert text.startswith(" Objects named keda elsewhere: HelmRelease ns0/keda (`")
    assert text.endswith(tail)
    assert text.count("HelmRelease") == min(count, 5)
    assert text.count("`), HelmRelease ") == min(count, 5) - 1


def test_the_elsewhere_hint_without_a_command_names_the_object_alone() -> None:
    text = render.elsewhere_text([Found("Application", "argocd", "x")], "x", lambda f: "")

    assert text == " Objects named x elsewhere: Application argocd/x."


def test_a_list_too_long_for_one_message_shows_the_worst_and_counts_the_rest() -> None:
    verdicts = [verdict(f"bad-{i:03}", Health.DEGRADED, message="x" * 250) for i in range(40)]
    verdicts += [verdict(f"ok-{i:03}", Health.HEALTHY, message="y" * 250) for i in range(400)]

    message = render.list_message(
        [render.ObjectRow(v) for v in verdicts],
        kind="HelmReleases",
        cluster="prod",
        scope="all",
        hint="Narrow it.",
    )

    blocks = message["blocks"]
    assert blocks[0]["type"] == "header"
    assert blocks[1]["elements"][0]["text"] == "440 objects: 40 Degraded · 400 Healthy"
    assert blocks[2]["text"]["text"].startswith(":red_circle: *ns/bad-000*: Degraded — xxx")
    note = blocks[-1]["elements"][0]["text"]
    left = int(note.split(" ")[0])
    assert 0 < left < 400
    assert note == (
        f"{left} more not shown, too many for one Slack message ({left} Healthy). Narrow it."
    )
    assert [b["type"] for b in blocks[2:]] == ["section"] * (len(blocks) - 3) + ["context"]
    assert message["text"].endswith(note)
