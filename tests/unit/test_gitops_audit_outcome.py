"""How a reconcile, refresh, sync or Flux resume ends on the audit record, and in words: pure.

One mapping from a request's end to `ok` / `failed` / `unknown` (docs/design.md §2 "Safety"), used
by
`/kai reconcile`, refresh, sync and Flux resume alike; a request written but not read back is
`unknown`, and its reply says it was made.
"""

from __future__ import annotations

import typing

import pytest

from bot.core import errors
from bot.gitops import argo, plan
from bot.gitops import render as render_gitops
from bot.gitops.plan import FluxReport, StepResult
from bot.gitops.suspend import SuspendOutcome, SuspendPlan
from bot.gitops.target import GitopsTarget, StepState, audit_outcome
from bot.rules.flux_suspend import SuspendRecord

HR = GitopsTarget("HelmRelease", "flux-system", "keda", "prod")
APP = GitopsTarget("Application", "argocd", "kai-scheduler", "prod")
EXPECTED: dict[str, str] = {
    "succeeded": "ok",
    "skipped": "ok",
    "failed": "failed",
    "not started": "failed",
    "unknown": "unknown",
    "timed out": "unknown",
    "blocked": "unknown",
    "not read back": "unknown",
}


def test_every_way_a_request_can_end_has_an_audit_outcome() -> None:
    assert set(typing.get_args(StepState)) == set(EXPECTED)


@pytest.mark.parametrize(("state", "expected"), EXPECTED.items(), ids=list(EXPECTED))
def test_a_reconcile_and_a_flux_resume_record_the_same_outcome_for_the_same_end(
    state: StepState, expected: str
) -> None:
    resumed = SuspendOutcome(
        SuspendPlan("resume", HR, SuspendRecord(suspended=True)),
        written={"kind": "HelmRelease"},
        reconcile=FluxReport((StepResult(HR, state),), 1.0),
    )

    assert audit_outcome(state) == expected
    assert resumed.outcome == expected


def test_a_suspend_written_is_ok() -> None:
    suspended = SuspendOutcome(
        SuspendPlan("suspend", HR, SuspendRecord(suspended=False)), {"kind": "x"}
    )
    assert suspended.outcome == "ok"


@pytest.mark.parametrize(
    ("error", "state", "note"),
    [
        pytest.param(
            errors.KubeWriteUnknown("503 unavailable"),
            "not read back",
            "the reconcile request got no answer, so it may or may not have been made: "
            "503 unavailable",
            id="no-answer",
        ),
        pytest.param(
            errors.KubeForbidden("cannot patch"),
            "failed",
            "the reconcile could not be requested: cannot patch",
            id="refused",
        ),
    ],
)
def test_a_reconcile_request_that_failed_after_a_resume_says_whether_it_may_have_been_made(
    error: errors.KubeError, state: str, note: str
) -> None:
    step = plan.judge_flux_request_error(HR, error)
    assert (step.state, step.note) == (state, note)


def test_a_reconcile_not_read_back_says_it_was_requested_and_why_it_is_not_known() -> None:
    step = plan.judge_flux_unread(HR, "2026-08-24T08:00:00Z", "cannot get helmreleases")

    text = render_gitops.flux_result(FluxReport((step,), 0.5), "U0123ABCD")["text"]

    assert text.splitlines() == [
        "Flux reconcile of HelmRelease flux-system/keda on prod: its result could not be read back",
        "- HelmRelease flux-system/keda: requested, but the object could not be read since: "
        "cannot get helmreleases",
    ]
    assert audit_outcome(step.state) == "unknown"


@pytest.mark.parametrize(
    ("action", "head"),
    [
        pytest.param(
            "sync", "Argo CD sync of Application argocd/kai-scheduler on prod: started", id="sync"
        ),
        pytest.param(
            "refresh",
            "Argo CD refresh of Application argocd/kai-scheduler on prod: requested",
            id="refresh",
        ),
    ],
)
def test_an_argo_request_not_read_back_says_it_was_made_and_why_its_result_is_not_known(
    action: str, head: str
) -> None:
    report = argo.unread_report(APP, action, 0.5, "cannot get applications")

    text = render_gitops.argo_result(report, "U0123ABCD")["text"]

    assert text == (
        f"{head}, but its result could not be read: the Application could not be read since "
        "(cannot get applications). Check it before trying again"
    )
    assert audit_outcome(report.state) == "unknown"
