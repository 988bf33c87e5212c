"""A change's typed parameters as the strings a Confirm button and an approval record carry:
every kind's round trip, and what is refused (a name more or fewer, a value out of form)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from bot.changes import params, registry
from bot.core import errors
from bot.gitops.change_suspend import SuspendParams
from bot.gitops.target import GitopsTarget, Request
from bot.keda.change import PauseParams
from bot.keda.pause import KedaTarget
from bot.keda.usecase import AckWait

JOB = KedaTarget("ScaledJob", "annia", "annia-worker", "prod")
HR = GitopsTarget("HelmRelease", "flux-system", "kai-scheduler", "prod")
APP = GitopsTarget("Application", "argocd", "web", "prod")
EXAMPLES: dict[str, Any] = {
    "pause": PauseParams(JOB, "node drain", timedelta(hours=2)),
    "resume": KedaTarget("ScaledObject", "annia", "annia-api", "prod"),
    "reconcile": Request(HR, with_source=True, force=True, reset=True),
    "sync": APP,
    "suspend": SuspendParams(HR, "chart hotfix", None),
    "flux-resume": HR,
}


@pytest.mark.parametrize("action", sorted(EXAMPLES), ids=sorted(EXAMPLES))
def test_every_kinds_parameters_come_back_as_they_went(action: str) -> None:
    kind = registry.change_kinds(keda_wait=AckWait())[action]
    change = EXAMPLES[action]

    encoded = params.encode(change)

    assert all(isinstance(value, str) for value in encoded.values())
    assert params.decode(kind.params, encoded) == change


def test_a_pause_is_flat_strings_with_its_duration_in_seconds_and_no_alias() -> None:
    assert params.encode(EXAMPLES["pause"]) == {
        "kind": "ScaledJob",
        "namespace": "annia",
        "name": "annia-worker",
        "cluster": "prod",
        "reason": "node drain",
        "duration": "7200",
    }
    assert params.encode(PauseParams(JOB))["duration"] == ""  # until resumed


def test_a_flag_not_given_is_empty_and_comes_back_false() -> None:
    encoded = params.encode(Request(HR))

    assert (encoded["with_source"], encoded["force"]) == ("", "")
    assert params.decode(Request, encoded) == Request(HR)


PAUSE = params.encode(EXAMPLES["pause"])


@pytest.mark.parametrize(
    ("kind", "raw", "why"),
    [
        (KedaTarget, params.encode(JOB) | {"replicas": "0"}, "replicas is not what it carries"),
        (KedaTarget, {k: v for k, v in params.encode(JOB).items() if k != "cluster"}, "cluster"),
        (GitopsTarget, params.encode(HR) | {"ns": "kube-system"}, "ns is not what it carries"),
        (Request, params.encode(Request(HR)) | {"force": "true"}, "force is 'true', not a flag"),
        (PauseParams, PAUSE | {"duration": "2h"}, "duration is '2h', not a number of seconds"),
        (PauseParams, PAUSE | {"duration": "-60"}, "not a number of seconds"),
        (KedaTarget, params.encode(JOB) | {"kind": "Deployment"}, "'Deployment' is not a KEDA"),
        (GitopsTarget, params.encode(HR) | {"kind": "Secret"}, "'Secret' is not a GitOps kind"),
    ],
    ids=[
        "unknown-field",
        "missing-field",
        "the-old-ns-alias",
        "bad-flag",
        "bad-duration",
        "negative-duration",
        "a-keda-kind-we-do-not-change",
        "a-gitops-kind-we-do-not-change",
    ],
)
def test_what_this_version_did_not_write_is_refused(
    kind: type, raw: dict[str, str], why: str
) -> None:
    with pytest.raises(errors.UserError, match=why) as refused:
        params.decode(kind, raw)
    assert "nothing was changed" in str(refused.value)


def test_a_field_that_cannot_ride_in_a_confirm_is_refused_at_once() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Replicas:
        count: int

    with pytest.raises(TypeError, match="cannot ride in a Confirm"):
        params.encode(Replicas(3))
