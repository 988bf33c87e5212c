"""`/kai list KIND [NAMESPACE | --all-namespaces]` reads where it is told, end to end: a namespace
shows only its objects, no namespace the kind's usual one, `-A` every namespace.
"""

from __future__ import annotations

from pathlib import Path

from testbed.stack import VIEWER, Stack, running_stack

HR_API = "helm.toolkit.fluxcd.io/v2"


LISTS = {
    "list hr apps": ["apps/podinfo"],
    "list hr": ["flux-system/kai-scheduler", "flux-system/keda"],
    "list hr -A": ["apps/podinfo", "flux-system/kai-scheduler", "flux-system/keda"],
}


async def test_a_list_shows_the_objects_of_the_namespace_it_names_and_no_other(
    tmp_path: Path,
) -> None:
    async with running_stack(tmp_path) as stack:
        stack.sim.apply(
            {
                "apiVersion": HR_API,
                "kind": "HelmRelease",
                "metadata": {"name": "podinfo", "namespace": "apps"},
                "spec": {"interval": "10m", "chart": {"spec": {"chart": "podinfo"}}},
            }
        )
        shown = {text: await names(stack, text) for text in LISTS}

    assert shown == LISTS


async def names(stack: Stack, text: str) -> list[str]:
    """`namespace/name` of each object listed, sorted."""
    reply = await stack.command(text, user_id=VIEWER)
    return sorted(line.split(":")[0] for line in reply.text.splitlines()[2:])
