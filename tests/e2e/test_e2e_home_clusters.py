"""The Home tab's "Paused and suspended" part across clusters, end to end (docs/design.md §2
"Home tab"): a cluster without Flux or KEDA has nothing of theirs to hold, so the tab says nothing
is paused or suspended (their CRDs absent answer 404: not installed, not "cannot list"); and the
held objects of several clusters are grouped by cluster, in the same order on every refresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from home_views import lines

from testbed.sim import Simulator
from testbed.stack import OPERATOR, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"
KS_API = "kustomize.toolkit.fluxcd.io/v1"
SJ_API = "keda.sh/v1alpha1"


def held_part(view: Mapping[str, Any]) -> list[str]:
    """The lines under "Paused and suspended", up to the next header."""
    blocks = view["blocks"]
    start = next(
        i
        for i, b in enumerate(blocks)
        if b["type"] == "header" and "Paused and suspended" in str(b)
    )
    end = next(i for i in range(start + 1, len(blocks)) if blocks[i]["type"] == "header")
    return lines({"blocks": blocks[start + 1 : end]})


async def open_home(stack: Stack) -> dict[str, Any]:
    delivery = await stack.driver.open_home(user_id=OPERATOR)
    assert delivery.status == 200
    return await stack.slack.wait_for_home(OPERATOR)


async def test_a_cluster_without_flux_or_keda_has_nothing_held_and_no_error(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path, scenarios=("kai-healthy",)) as stack:
        view = await open_home(stack)
        lists = [(r.resource, r.status) for r in stack.sim.requests if r.verb == "list"]

    assert held_part(view) == ["Nothing paused or suspended."]
    assert not [line for line in lines(view) if "cannot list" in line]
    assert ("helmreleases", 404) in lists and ("scaledjobs", 404) in lists  # absent, asked


def suspend_by_hand(sim: Simulator, api: str, kind: str, name: str) -> None:
    sim.patch(api, kind, name, "flux-system", patch={"spec": {"suspend": True}})


async def test_held_objects_of_two_clusters_are_grouped_by_cluster(tmp_path: Path) -> None:
    async with Simulator(scenarios=["default"]) as lab:
        two = {
            "clusters": [
                {"name": "sim", "kubeconfig": str(tmp_path / "kubeconfig"), "context": "sim"},
                {"name": "lab", "kubeconfig": lab.write_kubeconfig(str(tmp_path / "lab")),
                 "context": "sim"},
            ],
        }  # fmt: skip
        async with running_stack(tmp_path, config_overrides=two) as stack:
            # By kind and name alone, lab's HelmRelease keda would sit between sim's two.
            suspend_by_hand(stack.sim, HR_API, "HelmRelease", "kai-scheduler")
            suspend_by_hand(stack.sim, KS_API, "Kustomization", "flux-system")
            suspend_by_hand(lab, HR_API, "HelmRelease", "keda")
            lab.patch(
                SJ_API,
                "ScaledJob",
                "annia-worker",
                "annia",
                patch={"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}},
            )
            view = await open_home(stack)

    by_hand = "(no kai-chatops record)"
    assert held_part(view) == [
        f":double_vertical_bar: *ScaledJob annia/annia-worker* on lab — paused by hand {by_hand}",
        ":double_vertical_bar: *HelmRelease flux-system/keda* on lab — suspended by hand "
        f"{by_hand}",
        ":double_vertical_bar: *HelmRelease flux-system/kai-scheduler* on sim — suspended by "
        f"hand {by_hand}",
        ":double_vertical_bar: *Kustomization flux-system/flux-system* on sim — suspended by "
        f"hand {by_hand}",
    ]
