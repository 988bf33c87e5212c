"""Flux suspend and resume end to end: signed Slack requests in, the simulated Flux controllers out.

`/kai suspend KIND NS/NAME` writes `spec.suspend: true` and our record after a Confirm; `/kai resume
KIND NS/NAME` writes `spec.suspend: false`, then reconciles and reports it as `flux resume` does. A
timed suspend resumes by itself, found on the object after a restart. The service's clock is the
test's, moved by hand.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import START, Clock
from gitops_e2e import OCI_REPOSITORY
from stack_steps import audit_lines, channel_texts, patches

from bot.gitops import suspend_expiry, usecase
from testbed.stack import ALERT_CHANNEL, OPERATOR, VIEWER, Reply, Stack, running_stack

PODINFO_RELEASE = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2",
    "kind": "HelmRelease",
    "metadata": {"name": "podinfo", "namespace": "apps", "generation": 1},
    "spec": {"interval": "10m", "chart": {"spec": {"chart": "podinfo"}}},
    "status": {"observedGeneration": 1, "conditions": [
        {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "ok"}
    ]},
}  # fmt: skip
FLUX_RESOURCES = (
    "helmreleases", "kustomizations", "gitrepositories", "helmrepositories", "ocirepositories",
)  # fmt: skip
# (command word, apiVersion, kind, name) of one object of each Flux kind the simulator serves.
KINDS = [
    pytest.param("hr", "helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda", id="helmrelease"),
    pytest.param(
        "ks", "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", id="kustomization"
    ),
    pytest.param(
        "gitrepo", "source.toolkit.fluxcd.io/v1", "GitRepository", "flux-system", id="gitrepo"
    ),
    pytest.param(
        "helmrepo", "source.toolkit.fluxcd.io/v1", "HelmRepository", "kedacore", id="helmrepo"
    ),
    pytest.param("ocirepo", "source.toolkit.fluxcd.io/v1", "OCIRepository", "podinfo", id="oci"),
]
RECORD = ("suspended-by", "suspended-at", "suspend-reason", "suspend-until")


@pytest.fixture
async def stack(tmp_path: Path, clock: Clock) -> AsyncIterator[Stack]:
    async with running_stack(tmp_path, clock=clock) as running:
        running.sim.apply(OCI_REPOSITORY)
        yield running


def flux_object(stack: Stack, api: str, kind: str, name: str) -> dict[str, Any]:
    obj = stack.sim.get(api, kind, name, "flux-system")
    assert obj is not None
    return obj


def ours(obj: Mapping[str, Any]) -> dict[str, str]:
    notes = obj["metadata"].get("annotations") or {}
    return {k.removeprefix("kai-chatops/"): v for k, v in notes.items() if k.startswith("kai-")}


async def confirmed(stack: Stack, text: str) -> tuple[Reply, Mapping[str, Any]]:
    """Type the command, then click Confirm; the ask and the message that replaced it."""
    ask = await stack.command(text)
    assert ask.message is not None, ask.text
    done = await stack.click("Confirm", ask.message)
    assert done.message is not None
    return ask, done.message


@pytest.mark.parametrize(("word", "api", "kind", "name"), KINDS)
async def test_suspend_then_resume_each_flux_kind_with_confirm_record_and_reconcile(
    stack: Stack, caplog: pytest.LogCaptureFixture, word: str, api: str, kind: str, name: str
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    ask, done = await confirmed(stack, f"suspend {word} flux-system/{name} for 2h hotfix by hand")

    assert f"Suspend {kind} flux-system/{name} on sim?" in ask.text
    assert "Writes: spec.suspend: true, kai-chatops/suspended-by" in str(ask.message)
    suspended = flux_object(stack, api, kind, name)
    assert suspended["spec"]["suspend"] is True
    assert ours(suspended) == {
        "suspended-by": OPERATOR,
        "suspended-at": "2026-08-24T08:00:00Z",
        "suspend-reason": "hotfix by hand",
        "suspend-until": "2026-08-24T10:00:00Z",
    }
    assert f"Suspended {kind} flux-system/{name} on sim until 2026-08-24 10:00 UTC" in done["text"]
    (announced,) = channel_texts(stack)
    assert f"<@{OPERATOR}> suspended Flux {kind} flux-system/{name} on sim until" in announced
    assert "Reason: hotfix by hand" in announced

    stack.sim.clear_requests()
    _, resumed = await confirmed(stack, f"resume {word} flux-system/{name}")

    after = flux_object(stack, api, kind, name)
    assert after["spec"]["suspend"] is False
    assert set(ours(after)) == {"requested-by", "requested-at"}
    assert after["status"]["lastHandledReconcileAt"] == ours(after)["requested-at"]
    first = patches(stack)[0]
    assert first.body["spec"] == {"suspend": False}
    assert first.body["metadata"]["resourceVersion"]
    assert f"Resumed {kind} flux-system/{name} on sim (spec.suspend: false)" in resumed["text"]
    assert f"Flux reconcile of {kind} flux-system/{name} on sim: reconciled" in resumed["text"]
    assert "Flux reconcile of" in channel_texts(stack)[-1]
    assert [(r["action"], r["outcome"]) for r in audit_lines(caplog)] == [
        ("suspend", "ok"),
        ("resume", "ok"),
    ]
    assert stack.slack.violations == []


async def test_resuming_an_oci_helm_repository_says_flux_does_not_reconcile_it(
    stack: Stack,
) -> None:
    api = "source.toolkit.fluxcd.io/v1"
    await confirmed(stack, "suspend helmrepo flux-system/kai")
    stack.sim.clear_requests()

    _, resumed = await confirmed(stack, "resume helmrepo flux-system/kai")

    assert flux_object(stack, api, "HelmRepository", "kai")["spec"]["suspend"] is False
    assert len(patches(stack)) == 1  # spec.suspend only: no reconcile request
    assert "is a HelmRepository of type oci" in resumed["text"]


async def test_a_viewer_is_refused_both_before_any_cluster_request(stack: Stack) -> None:
    stack.sim.clear_requests()
    for text in ("suspend hr flux-system/keda", "resume hr flux-system/keda"):
        reply = await stack.command(text, user_id=VIEWER)
        assert "You are not allowed to" in reply.text, reply.text
    assert stack.sim.requests == []


async def test_a_viewer_clicking_an_operators_confirm_changes_nothing(stack: Stack) -> None:
    ask = await stack.command("suspend ks flux-system/flux-system")
    assert ask.message is not None
    stack.sim.clear_requests()

    clicked = await stack.click("Confirm", ask.message, user_id=VIEWER)

    assert "not allowed" in clicked.text
    assert patches(stack) == []


async def test_suspending_an_already_suspended_object_is_refused_and_writes_nothing(
    stack: Stack,
) -> None:
    await confirmed(stack, "suspend hr flux-system/keda for 1h upgrade window")
    stack.sim.clear_requests()

    reply = await stack.command("suspend hr flux-system/keda second try")

    assert reply.message is not None and reply.message["response_type"] == "ephemeral"
    assert (
        "HelmRelease flux-system/keda on sim is already suspended by "
        f"<@{OPERATOR}> at 2026-08-24 08:00 UTC, until 2026-08-24 09:00 UTC: upgrade window"
    ) in reply.text
    assert "nothing was changed. To resume it: `/kai resume hr flux-system/keda" in reply.text
    assert patches(stack) == []
    ours_now = ours(flux_object(stack, "helm.toolkit.fluxcd.io/v2", "HelmRelease", "keda"))
    assert ours_now["suspend-reason"] == "upgrade window"


async def test_a_suspend_by_hand_is_refused_saying_there_is_no_record(stack: Stack) -> None:
    api = "kustomize.toolkit.fluxcd.io/v1"
    stack.sim.patch(
        api, "Kustomization", "flux-system", "flux-system", patch={"spec": {"suspend": True}}
    )

    reply = await stack.command("suspend ks flux-system/flux-system")

    assert "set by hand or in Git: no kai-chatops record" in reply.text


async def test_resuming_an_object_that_is_not_suspended_says_so(stack: Stack) -> None:
    stack.sim.clear_requests()

    reply = await stack.command("resume gitrepo flux-system/flux-system")

    assert "GitRepository flux-system/flux-system on sim is not suspended" in reply.text
    assert patches(stack) == []


async def test_resume_without_a_flux_kind_stays_keda(stack: Stack) -> None:
    reply = await stack.command("resume annia/annia-worker")
    assert "ScaledJob annia/annia-worker on sim" in reply.text
    help_reply = await stack.command("help resume")
    assert "without a Flux KIND, resume means KEDA" in help_reply.text


async def test_a_missing_object_gets_a_clear_message(stack: Stack) -> None:
    reply = await stack.command("suspend hr flux-system/nope")
    assert "HelmRelease flux-system/nope was not found on sim" in reply.text


async def test_a_timed_suspend_resumes_and_reconciles_by_itself_after_a_restart(
    stack: Stack, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kai_chatops.audit")
    api = "helm.toolkit.fluxcd.io/v2"
    await confirmed(stack, "suspend hr flux-system/kai-scheduler for 2h node drain")
    await stack.restart_service()
    deps = stack.service.deps
    polling = usecase.Polling(timeout=10)

    clock.now += timedelta(hours=1)
    early = await suspend_expiry.sweep(
        deps.kube_for(None), deps.slack, deps.settings, deps.clock(), polling=polling
    )
    assert early.outcomes == [] and early.next_due == START + timedelta(hours=2)
    assert flux_object(stack, api, "HelmRelease", "kai-scheduler")["spec"]["suspend"] is True

    clock.now += timedelta(hours=1, minutes=1)
    done = await suspend_expiry.sweep(
        deps.kube_for(None), deps.slack, deps.settings, deps.clock(), polling=polling
    )

    assert [o.plan.target.name for o in done.outcomes] == ["kai-scheduler"]
    after = flux_object(stack, api, "HelmRelease", "kai-scheduler")
    assert after["spec"]["suspend"] is False
    assert after["status"]["lastHandledReconcileAt"] == ours(after)["requested-at"]
    (post,) = channel_texts(stack, ALERT_CHANNEL)
    assert "HelmRelease flux-system/kai-scheduler on sim resumed automatically after 2h" in post
    assert f"suspended by <@{OPERATOR}> at 2026-08-24 08:00 UTC" in post
    assert "Flux reconcile of HelmRelease flux-system/kai-scheduler on sim: reconciled" in post
    assert [(r["user"], r["action"], r["outcome"]) for r in audit_lines(caplog)][-1] == (
        "kai-chatops",
        "resume",
        "ok",
    )


async def test_the_timed_suspend_job_leaves_a_suspend_changed_by_hand_alone(
    stack: Stack, clock: Clock
) -> None:
    api = "helm.toolkit.fluxcd.io/v2"
    await confirmed(stack, "suspend hr flux-system/keda for 1h")
    later = {"kai-chatops/suspend-until": "2026-08-24T18:00:00Z"}
    stack.sim.patch(
        api, "HelmRelease", "keda", "flux-system", patch={"metadata": {"annotations": later}}
    )
    deps = stack.service.deps
    clock.now += timedelta(hours=2)

    swept = await suspend_expiry.sweep(deps.kube_for(None), deps.slack, deps.settings, clock.now)

    assert swept.outcomes == []
    assert flux_object(stack, api, "HelmRelease", "keda")["spec"]["suspend"] is True


async def test_a_timed_suspend_in_any_namespace_resumes_by_itself_with_one_list_per_kind(
    stack: Stack, clock: Clock
) -> None:
    stack.sim.apply(PODINFO_RELEASE)
    _, done = await confirmed(stack, "suspend hr apps/podinfo for 1h canary")
    assert "Suspended HelmRelease apps/podinfo on sim until 2026-08-24 09:00 UTC" in done["text"]
    await stack.restart_service()
    deps = stack.service.deps
    clock.now += timedelta(hours=1, minutes=1)
    stack.sim.clear_requests()

    swept = await suspend_expiry.sweep(
        deps.kube_for(None),
        deps.slack,
        deps.settings,
        clock.now,
        polling=usecase.Polling(timeout=10),
    )

    assert [o.plan.target.describe() for o in swept.outcomes] == ["HelmRelease apps/podinfo"]
    podinfo = stack.sim.get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "podinfo", "apps")
    assert podinfo is not None and podinfo["spec"]["suspend"] is False
    (post,) = channel_texts(stack, ALERT_CHANNEL)
    assert "HelmRelease apps/podinfo on sim resumed automatically after 1h" in post
    assert "Flux reconcile of HelmRelease apps/podinfo on sim: reconciled" in post
    lists = [(r.resource, r.namespace) for r in stack.sim.requests if r.verb == "list"]
    assert sorted(lists) == [(kind, None) for kind in sorted(FLUX_RESOURCES)]


async def test_a_reason_cannot_mention_anyone_in_blocks_or_fallback_text(stack: Stack) -> None:
    await confirmed(stack, "suspend ks flux-system/flux-system <!channel> look <https://x.y|here>")

    refused = await stack.command("suspend ks flux-system/flux-system")

    for text in [refused.text, json.dumps(refused.message), *channel_texts(stack)]:
        assert "<!channel>" not in text and "<https://" not in text
    assert "&lt;!channel&gt;" in refused.text
