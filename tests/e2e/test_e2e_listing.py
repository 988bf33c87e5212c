"""`/kai list KIND` and the "objects of that name elsewhere" hint, end to end through signed
slash commands against the simulator.
"""

from __future__ import annotations

import json

import pytest

from testbed.stack import OPERATOR, VIEWER, Stack

HR_API = "helm.toolkit.fluxcd.io/v2"


@pytest.mark.parametrize(
    ("text", "title", "line"),
    [
        pytest.param("list hr", "HelmReleases on sim: namespace flux-system",
                     "flux-system/kai-scheduler: Healthy — Ready is True", id="hr"),
        pytest.param("list kustomization", "Kustomizations on sim: namespace flux-system",
                     "flux-system/flux-system: Healthy", id="ks"),
        pytest.param("list gitrepo -A", "GitRepositories on sim: all namespaces",
                     "flux-system/flux-system: Healthy", id="gitrepo"),
        pytest.param("list helmrepo flux-system", "HelmRepositories on sim: namespace flux-system",
                     "flux-system/kedacore: Healthy", id="helmrepo"),
        pytest.param("list ocirepo", "OCIRepositories on sim: namespace flux-system",
                     "No OCIRepositories in namespace flux-system on sim.", id="ocirepo-none"),
        pytest.param("list app", "Applications on sim: namespace argocd",
                     "argocd/kai-scheduler: Healthy — Argo CD health Healthy", id="app"),
        pytest.param("list sj", "ScaledJobs on sim: namespace annia",
                     "annia/annia-worker: Healthy", id="sj"),
        pytest.param("list so --all-namespaces", "ScaledObjects on sim: all namespaces",
                     "annia/annia-api: Healthy", id="so"),
    ],
)  # fmt: skip
async def test_list_shows_each_kind_with_its_verdicts(
    stack: Stack, text: str, title: str, line: str
) -> None:
    reply = await stack.command(text, user_id=VIEWER)

    assert reply.text.splitlines()[0] == title
    assert line in reply.text
    assert reply.message is not None and reply.message["response_type"] == "ephemeral"


async def test_list_puts_the_worst_first(stack: Stack) -> None:
    stack.sim.set_condition(
        HR_API, "HelmRelease", "keda", "flux-system", "Ready", "False", "UpgradeFailed", "boom"
    )

    reply = await stack.command("list hr")

    lines = reply.text.splitlines()
    assert lines[1] == "2 objects: 1 Degraded · 1 Healthy"
    assert lines[2].startswith("flux-system/keda: Degraded") and "boom" in lines[2]
    assert lines[3].startswith("flux-system/kai-scheduler: Healthy")


async def test_a_long_list_fits_slack_and_says_how_many_were_left_out(stack: Stack) -> None:
    for i in range(1000):
        stack.sim.apply(
            {
                "apiVersion": HR_API,
                "kind": "HelmRelease",
                "metadata": {"name": f"app-{i:04}", "namespace": "flux-system"},
                "spec": {"interval": "10m", "chart": {"spec": {"chart": "x"}}},
                "status": {"conditions": [
                    {"type": "Ready", "status": "True", "reason": "InstallSucceeded",
                     "message": "Helm install succeeded for release " + "x" * 80}
                ]},
            }
        )  # fmt: skip

    reply = await stack.command("list hr")

    assert reply.message is not None
    blocks = reply.message["blocks"]
    assert len(blocks) <= 50 and all(len(b.get("text", {}).get("text", "")) <= 3000 for b in blocks)
    note = blocks[-1]["elements"][0]["text"]
    assert "more not shown, too many for one Slack message" in note
    assert "`/kai list hr NAMESPACE` narrows it." in note


async def test_a_reconcile_of_a_missing_object_names_it_in_another_kind(stack: Stack) -> None:
    reply = await stack.command("reconcile ks flux-system/kai-scheduler")

    assert reply.text == (
        "Kustomization flux-system/kai-scheduler was not found on sim. Objects named "
        "kai-scheduler elsewhere: HelmRelease flux-system/kai-scheduler (`/kai reconcile hr "
        "flux-system/kai-scheduler`), Application argocd/kai-scheduler (`/kai reconcile app "
        "argocd/kai-scheduler`)."
    )


async def test_a_sync_in_the_wrong_namespace_suggests_the_sync_that_exists(stack: Stack) -> None:
    reply = await stack.command("sync flux-system/kai-scheduler")

    assert "There is one in argocd: `/kai sync argocd/kai-scheduler`." in reply.text
    assert not [r for r in stack.sim.requests if r.method == "PATCH"]


async def test_a_pause_naming_a_scaledobject_keeps_kedas_own_hint(stack: Stack) -> None:
    reply = await stack.command("pause annia/annia-api for 1h drain")

    assert "There is a ScaledObject of that name" in reply.text  # KEDA's own hint stays


async def test_a_missing_object_with_no_namesake_reads_as_before(stack: Stack) -> None:
    reply = await stack.command("reconcile hr flux-system/nothing-like-it")

    assert reply.text == "HelmRelease flux-system/nothing-like-it was not found on sim."


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("list", "list needs a KIND", id="no-kind"),
        pytest.param("list helmreleas", "unknown kind 'helmreleas' (did you mean helmrelease?)",
                     id="typo"),
        pytest.param("list hr a b", "unexpected 'b'", id="extra"),
    ],
)  # fmt: skip
async def test_a_malformed_list_gets_its_usage_and_reads_nothing(
    stack: Stack, text: str, problem: str
) -> None:
    stack.sim.clear_requests()

    reply = await stack.command(text)

    assert problem in reply.text and "list KIND [NAMESPACE | --all-namespaces]" in reply.text
    assert stack.sim.requests == []


async def test_a_missing_object_gets_where_it_is_and_the_closest_names_in_the_verb_typed(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    stack.sim.clear_requests()

    wrong_namespace = await stack.command("suspend hr keda/keda for 1h")
    typo = await stack.command("resume hr flux-system/kai-schedular")
    keda_typo = await stack.command("pause annia/annia-workr")
    empty = await stack.command("list hr keda", user_id=VIEWER)

    assert wrong_namespace.text == (
        "HelmRelease keda/keda was not found on sim. There is one in flux-system: "
        "`/kai suspend hr flux-system/keda`."
    )
    assert typo.text == (
        "HelmRelease flux-system/kai-schedular was not found on sim. Did you mean "
        "`/kai resume hr flux-system/kai-scheduler`?"
    )
    assert "Did you mean `/kai pause annia/annia-worker`?" in keda_typo.text
    assert empty.text.splitlines()[1] == (
        "No HelmReleases in namespace keda on sim. There are HelmReleases in flux-system: "
        "`/kai list hr flux-system`."
    )
    assert not [r for r in stack.sim.requests if r.method == "PATCH"]
    # The hint's lists run at once: the client keeps a connection for each (none dropped).
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("urllib3")]


async def test_list_says_who_suspended_or_paused_why_and_until(stack: Stack) -> None:
    record = {
        "kai-chatops/suspended-by": OPERATOR,
        "kai-chatops/suspended-at": "2026-08-24T08:00:00Z",
        "kai-chatops/suspend-reason": "chart hotfix",
        "kai-chatops/suspend-until": "2026-08-24T11:00:00Z",
    }
    suspended = {"metadata": {"annotations": record}, "spec": {"suspend": True}}
    stack.sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch=suspended)
    by_hand = {"metadata": {"annotations": {"autoscaling.keda.sh/paused": "true"}}}
    stack.sim.patch("keda.sh/v1alpha1", "ScaledJob", "annia-worker", "annia", patch=by_hand)

    releases = await stack.command("list hr", user_id=VIEWER)
    jobs = await stack.command("list sj", user_id=VIEWER)

    assert (
        f"flux-system/keda: Suspended — suspended by {OPERATOR} at 2026-08-24 08:00 UTC, until "
        "2026-08-24 11:00 UTC: chart hotfix"
    ) in releases.text
    assert f"suspended by <@{OPERATOR}> at" in json.dumps(releases.message)
    assert "annia/annia-worker: Suspended — paused by hand (no kai-chatops record)" in jobs.text
