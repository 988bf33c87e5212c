"""Planning reconciles, refreshes and syncs, and reading controllers' answers: pure tables."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from bot.config import settings as config
from bot.core import errors
from bot.gitops import argo, plan
from bot.gitops import render as render_gitops
from bot.gitops import target as gitops_target
from bot.gitops.commands import Reconcile, ReconcileShortcut, Sync
from bot.gitops.plan import FluxPhase, FluxReport, StepResult
from bot.gitops.target import GitopsTarget

NOW = datetime(2026, 8, 24, 8, 15, 30, 482913, tzinfo=UTC)
HR = GitopsTarget("HelmRelease", "flux-system", "kai-scheduler", "prod")
TOKEN = "2026-08-24T08:15:30.482913Z"


def settings(**gitops: Any) -> config.Settings:
    raw = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0123"}, "gitops": gitops}
    return config.parse_settings(raw)


def flux_object(
    kind: str = "HelmRelease",
    *,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    generation: int = 1,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": "kai-scheduler", "namespace": "flux-system", "generation": generation},
        "spec": spec or {},
        "status": status or {},
    }


def cond(type_: str, status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


# --- tokens -----------------------------------------------------------------------------------


def test_a_token_is_rfc3339nano_in_utc_as_go_prints_it() -> None:
    assert plan.new_token(NOW) == TOKEN
    assert plan.new_token(NOW.replace(microsecond=0)) == "2026-08-24T08:15:30Z"
    in_paris = NOW.astimezone(timezone(timedelta(hours=2)))
    assert plan.new_token(in_paris) == TOKEN


def test_a_token_already_on_the_object_is_never_reused_even_when_the_clock_stands_still() -> None:
    obj = flux_object(status={"lastHandledReconcileAt": TOKEN})
    fresh = plan.new_token(NOW, plan.taken_tokens(obj))
    assert fresh == "2026-08-24T08:15:30.482913001Z"
    obj["metadata"]["annotations"] = {plan.REQUESTED_AT: fresh}
    assert plan.new_token(NOW, plan.taken_tokens(obj)) == "2026-08-24T08:15:30.482913002Z"


def test_the_request_patch_sets_only_the_token_and_who_asked() -> None:
    patch = plan.flux_request_patch(TOKEN, "U123")
    assert patch == {
        "metadata": {
            "annotations": {
                "reconcile.fluxcd.io/requestedAt": TOKEN,
                "kai-chatops/requested-by": "slack:U123",
                "kai-chatops/requested-at": TOKEN,
            }
        }
    }


# --- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "command", "default_cluster", "resume"),
    [
        pytest.param("HelmRelease", "/kai", None, "`/kai resume hr flux-system/x`", id="hr"),
        pytest.param("GitRepository", "/gpu", "prod", "`/gpu resume gitrepo flux-system/x`",
                     id="source-configured-command"),
        pytest.param("Kustomization", "/kai", "dev",
                     "`/kai resume ks flux-system/x --cluster prod`", id="another-cluster"),
    ],
)  # fmt: skip
def test_a_suspended_object_is_refused_naming_our_own_resume_command(
    kind: str, command: str, default_cluster: str | None, resume: str
) -> None:
    target = GitopsTarget(kind, "flux-system", "x", "prod")
    with pytest.raises(errors.UserError) as refused:
        plan.check_reconcilable(
            flux_object(kind, spec={"suspend": True}),
            target,
            command=command,
            default_cluster=default_cluster,
        )
    message = str(refused.value)
    assert "is suspended" in message and "nothing was changed" in message
    assert f"To resume it: {resume}" in message
    assert "flux resume" not in message


def test_an_oci_helm_repository_cannot_be_reconciled_on_demand() -> None:
    repo = GitopsTarget("HelmRepository", "flux-system", "kai", "prod")
    with pytest.raises(errors.UserError, match="cannot be reconciled on demand"):
        plan.check_reconcilable(flux_object("HelmRepository", spec={"type": "oci"}), repo)


def test_an_ordinary_object_is_reconcilable() -> None:
    plan.check_reconcilable(flux_object(spec={"suspend": False}), HR)


# --- sources ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "spec", "status", "expected"),
    [
        (
            "Kustomization",
            {"sourceRef": {"kind": "GitRepository", "name": "fleet"}},
            {},
            GitopsTarget("GitRepository", "flux-system", "fleet", "prod"),
        ),
        (
            "Kustomization",
            {"sourceRef": {"kind": "OCIRepository", "name": "apps", "namespace": "shared"}},
            {},
            GitopsTarget("OCIRepository", "shared", "apps", "prod"),
        ),
        (
            "HelmRelease",
            {"chart": {"spec": {"sourceRef": {"kind": "HelmRepository", "name": "kai"}}}},
            {},
            GitopsTarget("HelmChart", "flux-system", "flux-system-kai-scheduler", "prod"),
        ),
        (
            "HelmRelease",
            {
                "chart": {
                    "spec": {"sourceRef": {"kind": "HelmRepository", "name": "k", "namespace": "s"}}
                }
            },
            {},
            GitopsTarget("HelmChart", "s", "flux-system-kai-scheduler", "prod"),
        ),
        (
            "HelmRelease",
            {"chart": {"spec": {"sourceRef": {"kind": "HelmRepository", "name": "kai"}}}},
            {"helmChart": "charts/custom"},
            GitopsTarget("HelmChart", "charts", "custom", "prod"),
        ),
        (
            "HelmRelease",
            {"chartRef": {"kind": "OCIRepository", "name": "kai-chart"}},
            {},
            GitopsTarget("OCIRepository", "flux-system", "kai-chart", "prod"),
        ),
        (
            "HelmChart",
            {"sourceRef": {"kind": "HelmRepository", "name": "kedacore"}},
            {},
            GitopsTarget("HelmRepository", "flux-system", "kedacore", "prod"),
        ),
        ("GitRepository", {"url": "ssh://git@example.com/fleet"}, {}, None),
    ],
    ids=[
        "kustomization-git-same-namespace",
        "kustomization-oci-other-namespace",
        "helmrelease-chart-by-naming-rule",
        "helmrelease-chart-in-source-namespace",
        "helmrelease-chart-from-status",
        "helmrelease-chartref",
        "helmchart-repository",
        "source-has-no-source",
    ],
)
def test_the_source_reconciled_first_is_the_one_flux_would_pick(
    kind: str, spec: dict[str, Any], status: dict[str, Any], expected: GitopsTarget | None
) -> None:
    obj = flux_object(kind, spec=spec, status=status)
    target = GitopsTarget(kind, "flux-system", "kai-scheduler", "prod")
    assert plan.direct_source(obj, target) == expected


def test_a_source_of_a_kind_the_bot_cannot_reconcile_is_refused() -> None:
    obj = flux_object(
        "Kustomization", spec={"sourceRef": {"kind": "ExternalArtifact", "name": "x"}}
    )
    with pytest.raises(errors.UserError, match="reconcile without --with-source"):
        plan.direct_source(obj, GitopsTarget("Kustomization", "flux-system", "apps", "prod"))


# --- progress and results ---------------------------------------------------------------------


BEFORE = "2026-08-24T08:00:00Z"  # lastHandledReconcileAt as read before our request


@pytest.mark.parametrize(
    ("status", "generation", "expected"),
    [
        ({"lastHandledReconcileAt": BEFORE}, 1, FluxPhase.NOT_HANDLED),
        ({"lastHandledReconcileAt": TOKEN}, 1, FluxPhase.DONE),
        ({"lastHandledReconcileAt": "2026-08-24T08:16:00.1Z"}, 1, FluxPhase.DONE),
        (
            {"lastHandledReconcileAt": TOKEN, "conditions": [cond("Reconciling", "True")]},
            1,
            FluxPhase.RECONCILING,
        ),
        ({"lastHandledReconcileAt": TOKEN, "observedGeneration": 1}, 2, FluxPhase.RECONCILING),
        (
            {
                "lastHandledReconcileAt": TOKEN,
                "conditions": [cond("Reconciling", "True"), cond("Stalled", "True")],
            },
            1,
            FluxPhase.DONE,
        ),
        (
            {
                "lastHandledReconcileAt": TOKEN,
                "observedGeneration": 2,
                "conditions": [cond("Ready", "False")],
            },
            2,
            FluxPhase.DONE,
        ),
    ],
    ids=[
        "unchanged",
        "our-token",
        "a-newer-request-by-someone-else",
        "reconciling",
        "generation-behind",
        "stalled",
        "done",
    ],
)
def test_reconcile_wait_done_when_last_handled_changes(
    status: dict[str, Any], generation: int, expected: FluxPhase
) -> None:
    obj = flux_object(status=status, generation=generation)
    assert plan.flux_phase(obj, BEFORE) is expected


def test_reconcile_wait_from_never_handled_ends_at_the_first_handled_request() -> None:
    assert plan.flux_phase(flux_object(status={}), "") is FluxPhase.NOT_HANDLED
    handled = flux_object(status={"lastHandledReconcileAt": TOKEN})
    assert plan.flux_phase(handled, "") is FluxPhase.DONE


@pytest.mark.parametrize(
    ("force", "reset", "expected"),
    [
        (False, False, {}),
        (True, False, {plan.FORCE_AT: TOKEN}),
        (False, True, {plan.RESET_AT: TOKEN}),
        (True, True, {plan.FORCE_AT: TOKEN, plan.RESET_AT: TOKEN}),
    ],
    ids=["plain", "force", "reset", "force-and-reset"],
)
def test_reconcile_force_reset_write_the_same_token_as_requested_at(
    force: bool, reset: bool, expected: dict[str, str]
) -> None:
    annotations = plan.flux_request_patch(TOKEN, "U1", force=force, reset=reset)["metadata"][
        "annotations"
    ]
    assert annotations[plan.REQUESTED_AT] == TOKEN
    flux_requests = {k: v for k, v in annotations.items() if k in (plan.FORCE_AT, plan.RESET_AT)}
    assert flux_requests == expected


@pytest.mark.parametrize(
    ("conditions", "state", "summary"),
    [
        ([cond("Ready", "True", "UpgradeSucceeded", "ok")], "succeeded", "Ready True"),
        ([cond("Ready", "False", "UpgradeFailed", "boom")], "failed", "Ready False"),
        ([cond("Ready", "Unknown", "Progressing", "still going")], "failed", "Ready Unknown"),
        ([], "unknown", "status can't be determined"),
    ],
    ids=["ready-true", "ready-false", "ready-unknown", "no-ready"],
)
def test_reconcile_ending_with_ready_unknown_is_reported_as_flux_reports_it(
    conditions: list[dict[str, str]], state: str, summary: str
) -> None:
    result = plan.judge_flux(flux_object(status={"conditions": conditions}), HR, TOKEN)
    report = render_gitops.flux_result(FluxReport((result,), 1.0), "U1")
    assert result.state == state
    assert summary in report["text"]


def test_ready_true_is_a_success_with_the_applied_revision() -> None:
    history = [{"chartName": "kai-scheduler", "chartVersion": "v0.17.0"}]
    ready = cond("Ready", "True", "UpgradeSucceeded", "Helm upgrade succeeded")
    obj = flux_object(status={"conditions": [ready], "history": history})
    result = plan.judge_flux(obj, HR, TOKEN)
    assert result == StepResult(
        HR,
        "succeeded",
        "True",
        "UpgradeSucceeded",
        "Helm upgrade succeeded",
        "kai-scheduler@v0.17.0",
        "",
        TOKEN,
    )


def test_ready_false_is_a_failure_with_the_controllers_message_verbatim() -> None:
    ready = cond("Ready", "False", "UpgradeFailed", "Helm upgrade failed: timed out\n  waiting")
    result = plan.judge_flux(flux_object(status={"conditions": [ready]}), HR, TOKEN)
    assert (result.state, result.reason) == ("failed", "UpgradeFailed")
    assert result.message == "Helm upgrade failed: timed out\n  waiting"


def test_stalled_without_ready_is_a_failure_in_stalled_words() -> None:
    stalled = cond("Stalled", "True", "InvalidChartReference", "chart not found")
    result = plan.judge_flux(flux_object(status={"conditions": [stalled]}), HR, TOKEN)
    assert (result.state, result.reason, result.message) == (
        "failed",
        "InvalidChartReference",
        "chart not found",
    )


RETRYING = cond("Reconciling", "True", "ProgressingWithRetry", "retrying after 5m")
FAILED = cond("Ready", "False", "UpgradeFailed", "Helm upgrade failed: timed out")


@pytest.mark.parametrize(
    ("conditions", "observed", "phase", "retry"),
    [
        ([FAILED, RETRYING], 1, FluxPhase.DONE, "failed; Flux retries"),
        ([FAILED], 1, FluxPhase.DONE, "failed; Flux tries again at its next interval"),
        (
            [FAILED, cond("Stalled", "True", "InvalidChartReference", "chart not found")],
            1,
            FluxPhase.DONE,
            "failed; Flux will not retry until the object changes",
        ),
        ([FAILED, cond("Reconciling", "True", "Progressing", "")], 1, FluxPhase.RECONCILING, ""),
        ([FAILED], 0, FluxPhase.RECONCILING, ""),
    ],
    ids=[
        "retrying",
        "failed-at-the-current-generation",
        "stalled",
        "a-new-attempt-under-way",
        "failed-at-an-older-generation",
    ],
)
def test_a_failed_attempt_is_reported_at_once_saying_whether_flux_retries(
    conditions: list[dict[str, str]], observed: int, phase: FluxPhase, retry: str
) -> None:
    status = {"lastHandledReconcileAt": TOKEN, "observedGeneration": observed}
    obj = flux_object(status={**status, "conditions": conditions})

    assert plan.flux_phase(obj, BEFORE) is phase
    if phase is FluxPhase.DONE:
        report = FluxReport((plan.judge_flux(obj, HR, TOKEN),), 1.0)
        head = render_gitops.flux_result(report, "U1")["text"].splitlines()[0]
        assert head == f"Flux reconcile of {HR.describe()} on {HR.cluster}: {retry}"


def test_no_ready_condition_is_reported_as_unknown() -> None:
    result = plan.judge_flux(flux_object(status={"conditions": []}), HR, TOKEN)
    assert result.state == "unknown"
    assert "status can't be determined" in result.note


def test_a_timeout_says_whether_flux_picked_the_request_up_and_what_the_object_says() -> None:
    ready = cond("Ready", "True", "UpgradeSucceeded", "fine")
    obj = flux_object(status={"lastHandledReconcileAt": "older", "conditions": [ready]})
    result = plan.judge_flux_timeout(obj, HR, TOKEN, "older", "5m")
    assert result.state == "timed out"
    assert "no result within 5m" in result.note
    assert "Flux has not handled the request (lastHandledReconcileAt: older)" in result.note
    assert "It says now: Healthy" in result.note


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"lastAppliedRevision": "main@sha1:3f2c"}, "main@sha1:3f2c"),
        ({"history": [{"chartName": "keda", "chartVersion": "2.20.2"}]}, "keda@2.20.2"),
        ({"artifact": {"revision": "sha256:5d1c"}}, "sha256:5d1c"),
        ({"lastAttemptedRevision": "v0.17.0"}, "v0.17.0"),
        ({}, ""),
    ],
    ids=["kustomization", "helmrelease", "source", "attempted-only", "none"],
)
def test_the_applied_revision_is_read_where_each_kind_keeps_it(
    status: dict[str, Any], expected: str
) -> None:
    assert plan.applied_revision(flux_object(status=status)) == expected


def test_the_outcome_of_a_chain_is_its_first_step_that_did_not_succeed() -> None:
    skipped = StepResult(GitopsTarget("HelmRepository", "flux-system", "kai", "prod"), "skipped")
    chart = StepResult(GitopsTarget("HelmChart", "flux-system", "c", "prod"), "failed")
    release = StepResult(HR, "not started")
    assert FluxReport((skipped, StepResult(HR, "succeeded")), 1.0).outcome == "succeeded"
    assert FluxReport((skipped, chart, release), 1.0).outcome == "failed"


# --- what the user asked for ------------------------------------------------------------------


def test_a_configured_shortcut_resolves_to_its_object_on_the_chosen_cluster() -> None:
    configured = settings(kai={"kind": "hr", "name": "flux-system/kai-scheduler"})
    request = gitops_target.resolve_request(ReconcileShortcut("kai", with_source=True), configured)
    assert request == gitops_target.Request(HR, with_source=True)


def test_an_unconfigured_shortcut_says_which_key_to_set() -> None:
    with pytest.raises(errors.UserError, match=re.escape("set gitops.keda in the configuration")):
        gitops_target.resolve_request(ReconcileShortcut("keda"), settings())


@pytest.mark.parametrize(
    ("shortcut", "parsed", "message"),
    [
        (
            {"kind": "helmrelease", "name": "flux-system/kai-scheduler"},
            ReconcileShortcut("kai", hard=True),
            "--hard is only for Argo CD Applications",
        ),
        (
            {"kind": "app", "name": "argocd/kai-scheduler"},
            ReconcileShortcut("kai", with_source=True),
            "--with-source is not for Application argocd/kai-scheduler",
        ),
        (
            {"kind": "app", "name": "argocd/kai-scheduler"},
            ReconcileShortcut("kai", force=True),
            "--force is only for HelmReleases, not Application argocd/kai-scheduler",
        ),
    ],
    ids=["hard-on-helmrelease", "with-source-on-application", "force-on-application"],
)
def test_a_flag_that_does_not_fit_the_configured_kind_is_refused(
    shortcut: dict[str, str], parsed: ReconcileShortcut, message: str
) -> None:
    with pytest.raises(errors.UserError, match=re.escape(message)):
        gitops_target.resolve_request(parsed, settings(kai=shortcut))


def test_explicit_commands_resolve_without_configuration() -> None:
    reconcile = Reconcile("Kustomization", "flux-system", "apps", with_source=True)
    assert gitops_target.resolve_request(reconcile, settings()).target.kind == "Kustomization"
    assert gitops_target.resolve_request(Sync("argocd", "kai"), settings()).target.is_application
    with pytest.raises(errors.UserError, match="unknown cluster 'nowhere'"):
        gitops_target.resolve_request(Sync("argocd", "kai", cluster="nowhere"), settings())


# --- Argo CD ----------------------------------------------------------------------------------

APP = GitopsTarget("Application", "argocd", "kai-scheduler", "prod")


def application(**fields: Any) -> dict[str, Any]:
    metadata = {"name": "kai-scheduler", "namespace": "argocd", "resourceVersion": "42"}
    return {"kind": "Application", "metadata": metadata, **fields}


def test_a_refresh_is_an_annotation_normal_or_hard() -> None:
    assert argo.refresh_patch(False, "U1", NOW)["metadata"]["annotations"][argo.REFRESH] == "normal"
    assert argo.refresh_patch(True, "U1", NOW)["metadata"]["annotations"][argo.REFRESH] == "hard"
    assert argo.is_refresh_pending(application(metadata={"annotations": {argo.REFRESH: "hard"}}))


def test_a_refresh_carries_a_go_rfc3339nano_timestamp_unlike_the_one_on_the_app() -> None:
    """argo-cd util/argo/argo.go RefreshApp: `time.Now().Format(time.RFC3339Nano)`."""
    written = argo.refresh_patch(False, "U1", NOW)["metadata"]["annotations"]
    assert written[argo.REFRESH_TIMESTAMP] == "2026-08-24T08:15:30.482913Z"
    on_app = application(
        metadata={"annotations": {argo.REFRESH_TIMESTAMP: "2026-08-24T08:15:30.482913Z"}}
    )
    again = argo.refresh_patch(True, "U1", NOW, on_app)["metadata"]["annotations"]
    assert again[argo.REFRESH_TIMESTAMP] == "2026-08-24T08:15:30.482913001Z"


@pytest.mark.parametrize(
    ("app", "message"),
    [
        (
            application(operation={"initiatedBy": {"username": "admin"}, "sync": {}}),
            "already has an operation in progress (started by admin)",
        ),
        (
            application(status={"operationState": {"phase": "Running", "message": "waiting"}}),
            "has an operation Running (waiting)",
        ),
    ],
    ids=["operation-set", "operation-running"],
)
def test_a_sync_is_refused_while_another_operation_is_set_or_running(
    app: dict[str, Any], message: str
) -> None:
    with pytest.raises(errors.UserError, match=re.escape(message)):
        argo.check_syncable(app, APP)


def test_a_finished_operation_does_not_block_a_sync() -> None:
    argo.check_syncable(application(status={"operationState": {"phase": "Succeeded"}}), APP)


def test_the_sync_operation_names_the_slack_user_and_guards_the_read_version() -> None:
    patch = argo.sync_patch(application(), "U123", "C9", NOW)
    assert patch["metadata"]["resourceVersion"] == "42"
    assert patch["operation"]["initiatedBy"] == {"username": "slack:U123"}
    assert patch["operation"]["sync"] == {"syncStrategy": {"hook": {}}, "prune": False}
    assert patch["operation"]["info"] == [
        {"name": "Reason", "value": "requested from Slack by U123 in C9"}
    ]


SEED_POLICY = {
    "automated": {"prune": True, "selfHeal": True},
    "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
    "retry": {"limit": 3, "backoff": {"duration": "10s"}},
}


@pytest.mark.parametrize(
    ("policy", "sync_options", "retry"),
    [
        (SEED_POLICY, ["CreateNamespace=true", "ServerSideApply=true"], SEED_POLICY["retry"]),
        ({"syncOptions": ["PruneLast=true"]}, ["PruneLast=true"], None),
        ({"retry": {"limit": -1}}, None, {"limit": -1}),
        ({"automated": {}}, None, None),
        (None, None, None),
    ],
    ids=["seed-kai-app", "options-only", "retry-only", "neither", "no-sync-policy"],
)
def test_argo_sync_carries_sync_options_and_retry(
    policy: dict[str, Any] | None, sync_options: list[str] | None, retry: dict[str, Any] | None
) -> None:
    app = application(spec={"syncPolicy": policy} if policy is not None else {})
    operation = argo.sync_patch(app, "U123", "C9", NOW)["operation"]
    assert operation["sync"].get("syncOptions") == sync_options
    assert operation.get("retry") == retry
    assert operation["sync"]["syncStrategy"] == {"hook": {}}


@pytest.mark.parametrize(
    ("operation_state", "pending", "expected"),
    [
        ({"phase": "Running", "message": argo.BLOCKED_BY_WINDOW}, True, "blocked"),
        (
            {"phase": "Running", "message": f"{argo.BLOCKED_BY_WINDOW}: invalid schedule"},
            True,
            "blocked",
        ),
        ({"phase": "Running", "message": "one or more tasks are running"}, True, None),
        ({"phase": "Succeeded", "message": "successfully synced"}, False, "succeeded"),
    ],
    ids=["blocked", "blocked-with-error", "running", "succeeded"],
)
def test_argo_sync_held_by_a_sync_window_is_blocked_not_a_timeout(
    operation_state: dict[str, str], pending: bool, expected: str | None
) -> None:
    operation = {"sync": {}} if pending else None
    app = application(operation=operation, status={"operationState": operation_state})
    waiting = argo.is_sync_pending(app) and not argo.is_blocked_by_window(app)
    assert waiting is (expected is None)
    if expected is not None:
        assert argo.judge_sync(app) == expected


def test_a_blocked_sync_report_quotes_the_operation_message() -> None:
    app = application(
        operation={"sync": {}},
        status={"operationState": {"phase": "Running", "message": argo.BLOCKED_BY_WINDOW}},
    )
    report = argo.ArgoReport(APP, "sync", "blocked", argo.read_app(app), 0.3, "5m")
    text = render_gitops.argo_result(report, "U1")["text"]
    assert "blocked by a sync window" in text
    assert argo.BLOCKED_BY_WINDOW in text
    assert "no result within" not in text


@pytest.mark.parametrize(
    ("phase", "expected"),
    [("Succeeded", "succeeded"), ("Failed", "failed"), ("Error", "failed"), ("", "unknown")],
)
def test_a_finished_sync_is_judged_by_its_phase(phase: str, expected: str) -> None:
    assert argo.judge_sync(application(status={"operationState": {"phase": phase}})) == expected


def test_the_application_state_names_sync_health_revision_and_errors() -> None:
    status = {
        "sync": {"status": "OutOfSync", "revision": "v0.17.0"},
        "health": {"status": "Degraded"},
        "operationState": {"phase": "Failed", "message": "boom", "syncResult": {"revision": "abc"}},
        "conditions": [{"type": "ComparisonError", "message": "repo unreachable"}],
    }
    state = argo.read_app(application(status=status))
    assert (state.sync, state.health, state.revision) == ("OutOfSync", "Degraded", "v0.17.0")
    assert (state.phase, state.message, state.synced_revision) == ("Failed", "boom", "abc")
    assert state.errors == ("ComparisonError: repo unreachable",)


# --- rendering --------------------------------------------------------------------------------


def test_a_chain_result_lists_every_step_in_order_with_flux_words() -> None:
    repo = GitopsTarget("HelmRepository", "flux-system", "kai", "prod")
    chart = GitopsTarget("HelmChart", "flux-system", "flux-system-kai-scheduler", "prod")
    steps = (
        StepResult(repo, "skipped", note=plan.STATIC_NOTE),
        StepResult(chart, "succeeded", "True", "ChartPullSucceeded", "pulled", "v0.17.0", "", "t1"),
        StepResult(HR, "failed", "False", "UpgradeFailed", "Helm <upgrade> failed", "", "", "t2"),
    )
    message = render_gitops.flux_result(FluxReport(steps, 2.5), "U1")
    assert message["text"].splitlines()[0] == (
        "Flux reconcile of HelmRelease flux-system/kai-scheduler on prod: failed"
    )
    steps_shown = [line for line in message["text"].splitlines() if line.startswith("- ")]
    assert [line.split(":")[0] for line in steps_shown] == [
        "- HelmRepository flux-system/kai",
        "- HelmChart flux-system/flux-system-kai-scheduler",
        "- HelmRelease flux-system/kai-scheduler",
    ]
    blocks = str(message["blocks"])
    assert "Helm &lt;upgrade&gt; failed" in blocks and "requestedAt `t2`" in blocks


def test_help_shows_what_each_shortcut_acts_on() -> None:
    configured = settings(kai={"kind": "hr", "name": "flux-system/kai-scheduler"}).gitops
    assert render_gitops.describe_shortcuts(configured) == (
        "Shortcuts:\n"
        "  /kai reconcile kai: HelmRelease flux-system/kai-scheduler\n"
        "  /kai reconcile keda: not configured (gitops.keda)"
    )
