"""The simulator's Flux and Argo CD controllers answer requests the way the real ones do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from waiting import wait_until

from testbed.sim import Simulator
from testbed.sim.controller_answers import Behaviour, parse_behaviour

HR_API, KS_API, SRC_API, APP_API = (
    "helm.toolkit.fluxcd.io/v2",
    "kustomize.toolkit.fluxcd.io/v1",
    "source.toolkit.fluxcd.io/v1",
    "argoproj.io/v1alpha1",
)
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
REFRESH = "argocd.argoproj.io/refresh"


pytestmark = pytest.mark.sim(scenarios=("flux", "argocd"), controllers=True)


def status(sim: Simulator, api: str, kind: str, name: str, namespace: str) -> dict[str, Any]:
    obj = sim.get(api, kind, name, namespace)
    assert obj is not None
    return dict(obj.get("status") or {})


def ready(obj_status: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj_status.get("conditions", []) if c["type"] == "Ready")


def request(sim: Simulator, api: str, kind: str, name: str, token: str, **annotations: str) -> None:
    annotations = {REQUESTED_AT: token, **annotations}
    sim.patch(api, kind, name, "flux-system", patch={"metadata": {"annotations": annotations}})


def handled(sim: Simulator, api: str, kind: str, name: str, token: str) -> dict[str, Any] | None:
    current = status(sim, api, kind, name, "flux-system")
    return current if current.get("lastHandledReconcileAt") == token else None


async def until_handled(
    sim: Simulator, api: str, kind: str, name: str, token: str
) -> dict[str, Any]:
    """The object's status once its controller has handled the request `token`."""
    return await wait_until(
        lambda: handled(sim, api, kind, name, token), 2, f"{kind} {name} handled {token}"
    )


@pytest.mark.parametrize(
    ("api", "kind", "name"),
    [
        (HR_API, "HelmRelease", "keda"),
        (KS_API, "Kustomization", "flux-system"),
        (SRC_API, "GitRepository", "flux-system"),
        (SRC_API, "HelmChart", "flux-system-keda"),
    ],
    ids=["helmrelease", "kustomization", "gitrepository", "helmchart"],
)
async def test_flux_answers_a_new_request_with_its_token_and_ready_true(
    sim: Simulator, api: str, kind: str, name: str
) -> None:
    request(sim, api, kind, name, "2026-08-24T09:00:00.1Z", keep="me")
    answered = await until_handled(sim, api, kind, name, "2026-08-24T09:00:00.1Z")
    assert ready(answered)["status"] == "True"
    obj = sim.get(api, kind, name, "flux-system")
    assert obj is not None and obj["metadata"]["annotations"]["keep"] == "me"


async def test_a_failing_reconcile_leaves_ready_false_with_the_given_message(
    sim: Simulator,
) -> None:
    fail = {"sim.kai-chatops/reconcile": "fail:Helm upgrade failed: image pull backoff"}
    request(sim, HR_API, "HelmRelease", "keda", "t1", **fail)
    answered = await until_handled(sim, HR_API, "HelmRelease", "keda", "t1")
    condition = dict(ready(answered))
    # The status changed (True to False), so the transition time moved, as
    # meta.SetStatusCondition moves it; the upstream CRD's schema requires the field.
    assert condition.pop("lastTransitionTime") != "2026-08-24T08:15:31Z"
    assert condition == {
        "type": "Ready",
        "status": "False",
        "reason": "UpgradeFailed",
        "message": "Helm upgrade failed: image pull backoff",
        "observedGeneration": 1,
    }


async def test_a_slow_reconcile_shows_reconciling_first_then_the_result(sim: Simulator) -> None:
    request(
        sim,
        KS_API,
        "Kustomization",
        "flux-system",
        "t2",
        **{"sim.kai-chatops/reconcile": "slow:200ms"},
    )

    def reconciling() -> bool:
        conditions = status(sim, KS_API, "Kustomization", "flux-system", "flux-system")[
            "conditions"
        ]
        return any(c["type"] == "Reconciling" and c["status"] == "True" for c in conditions)

    await wait_until(reconciling, 2, "the Kustomization Reconciling")
    assert handled(sim, KS_API, "Kustomization", "flux-system", "t2") is None
    answered = await until_handled(sim, KS_API, "Kustomization", "flux-system", "t2")
    assert [c["type"] for c in answered["conditions"]] == ["Ready"]
    assert ready(answered)["message"].startswith("Applied revision: main@sha1:3f2c9a1e")


async def test_a_controller_told_never_to_answer_leaves_the_request_unhandled(
    sim: Simulator,
) -> None:
    request(sim, HR_API, "HelmRelease", "keda", "t3", **{"sim.kai-chatops/reconcile": "never"})
    request(sim, HR_API, "HelmRelease", "kai-scheduler", "t3")  # a neighbour, to know when to look
    await until_handled(sim, HR_API, "HelmRelease", "kai-scheduler", "t3")
    assert handled(sim, HR_API, "HelmRelease", "keda", "t3") is None


async def test_a_suspended_object_gets_its_request_marked_handled_and_nothing_else(
    sim: Simulator,
) -> None:
    sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch={"spec": {"suspend": True}})
    before = status(sim, HR_API, "HelmRelease", "keda", "flux-system")
    request(sim, HR_API, "HelmRelease", "keda", "t4")
    answered = await until_handled(sim, HR_API, "HelmRelease", "keda", "t4")
    assert answered == {**before, "lastHandledReconcileAt": "t4"}


async def test_argo_cd_removes_the_refresh_annotation_and_stamps_the_comparison(
    sim: Simulator,
) -> None:
    annotations = {REFRESH: "hard", "keep": "me"}
    sim.patch(
        APP_API,
        "Application",
        "kai-scheduler",
        "argocd",
        patch={"metadata": {"annotations": annotations}},
    )

    def refreshed() -> dict[str, Any] | None:
        app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
        return app if app and REFRESH not in app["metadata"]["annotations"] else None

    app = await wait_until(refreshed, 2, "the refresh annotation removed")
    assert app["metadata"]["annotations"] == {"keep": "me"}
    assert app["status"]["reconciledAt"] != "2026-08-24T08:20:04Z"


REFRESH_TIMESTAMP = "argocd.argoproj.io/refresh-timestamp"


def refresh_app(sim: Simulator, **annotations: str) -> None:
    patch = {"metadata": {"annotations": annotations}}
    sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=patch)


@pytest.mark.parametrize(
    ("second", "passes"),
    [
        (
            {REFRESH_TIMESTAMP: "2026-12-02T01:00:01.5Z"},
            ["2026-12-02T01:00:00Z", "2026-12-02T01:00:01.5Z"],
        ),
        ({}, ["2026-12-02T01:00:00Z"]),
    ],
    ids=["with-timestamp-kept-for-a-second-pass", "without-timestamp-removed-by-the-running-pass"],
)
async def test_argo_cd_keeps_a_refresh_requested_during_a_pass_only_when_it_carries_a_new_timestamp(
    sim: Simulator, second: dict[str, Any], passes: list[str]
) -> None:
    """controller/appcontroller.go removeRefreshAnnotationCombo: the removal tests the timestamp
    the pass started from; a newer one survives and is refreshed again."""
    assert sim.controllers is not None
    refresh_app(sim, **{"sim.kai-chatops/reconcile": "slow:0.3s"})
    refresh_app(sim, **{REFRESH: "normal", REFRESH_TIMESTAMP: "2026-12-02T01:00:00Z"})
    await wait_until(
        lambda: sim.controllers and sim.controllers.is_refreshing("argocd", "kai-scheduler"),
        2,
        "a refresh pass running",
    )

    refresh_app(sim, **{REFRESH: "hard", **second})

    def done() -> dict[str, Any] | None:
        app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
        idle = sim.controllers is not None and not sim.controllers.is_refreshing(
            "argocd", "kai-scheduler"
        )
        return app if app and idle and REFRESH not in app["metadata"]["annotations"] else None

    app = await wait_until(done, 5, "both refresh passes done")
    assert REFRESH_TIMESTAMP not in app["metadata"]["annotations"]
    served = [stamp for ns, name, stamp in sim.controllers.refreshed if name == "kai-scheduler"]
    assert served == passes


@pytest.mark.parametrize(
    ("behaviour", "phase", "message"),
    [
        ("succeed", "Succeeded", "successfully synced (all tasks run)"),
        ("fail:hook failed", "Failed", "hook failed"),
    ],
    ids=["succeeds", "fails"],
)
async def test_argo_cd_carries_out_an_operation_then_clears_it(
    sim: Simulator, behaviour: str, phase: str, message: str
) -> None:
    options = ["CreateNamespace=true"]
    operation = {"initiatedBy": {"username": "slack:U1"}, "sync": {"syncOptions": options}}
    patch = {
        "operation": operation,
        "metadata": {"annotations": {"sim.kai-chatops/sync": behaviour}},
    }
    sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=patch)

    def finished() -> dict[str, Any] | None:
        app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
        return app if app and "operation" not in app else None

    state = (await wait_until(finished, 2, "the operation carried out"))["status"]["operationState"]
    assert (state["phase"], state["message"]) == (phase, message)
    assert state["operation"] == operation
    assert state["syncResult"]["revision"] == "v0.17.0"


async def test_stopped_controllers_no_longer_answer(sim: Simulator) -> None:
    await sim.stop_controllers()
    request(sim, HR_API, "HelmRelease", "keda", "t5")
    await asyncio.sleep(0)  # let any (wrongly) running controller take its turn
    assert handled(sim, HR_API, "HelmRelease", "keda", "t5") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", Behaviour("succeed", 0.5)),
        ("never", Behaviour("never", 0.5)),
        ("fail", Behaviour("fail", 0.5)),
        ("fail: no space left", Behaviour("fail", 0.5, "no space left")),
        ("retry", Behaviour("retry", 0.5)),
        ("retry:rolled back", Behaviour("retry", 0.5, "rolled back")),
        ("blocked", Behaviour("blocked", 0.5)),
        ("slow:2s", Behaviour("succeed", 2.0)),
        ("slow:250ms", Behaviour("succeed", 0.25)),
        ("nonsense", Behaviour("succeed", 0.5)),
    ],
)
def test_the_behaviour_annotation_is_read_with_the_default_as_fallback(
    value: str, expected: Behaviour
) -> None:
    assert parse_behaviour(value, Behaviour("succeed", 0.5)) == expected


def finished_operation(sim: Simulator) -> dict[str, Any] | None:
    app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
    return app["status"]["operationState"] if app and "operation" not in app else None


def start_operation(sim: Simulator, operation: dict[str, Any], behaviour: str = "") -> None:
    annotations = {"sim.kai-chatops/sync": behaviour} if behaviour else {}
    patch = {"operation": operation, "metadata": {"annotations": annotations}}
    sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=patch)


@pytest.mark.parametrize(
    ("sync", "retry", "behaviour", "phase", "message", "namespace_created"),
    [
        (
            {"syncOptions": ["CreateNamespace=true", "ServerSideApply=true"]},
            None,
            "",
            "Succeeded",
            "successfully synced (all tasks run)",
            True,
        ),
        (
            {},
            None,
            "",
            "Failed",
            'one or more objects failed to apply, reason: namespaces "kai-scheduler" not found',
            False,
        ),
        (
            {"syncOptions": ["CreateNamespace=true"]},
            {"limit": 3},
            "fail:hook failed",
            "Failed",
            "hook failed (retried 3 times).",
            False,
        ),
        ({"syncOptions": []}, {"limit": 2}, "", "Failed", "(retried 2 times).", False),
    ],
    ids=["create-namespace", "no-create-namespace", "retried-hook-failure", "retried-missing-ns"],
)
async def test_argo_sync_carries_sync_options_and_retry_honoured_by_the_controller(
    sim: Simulator,
    sync: dict[str, Any],
    retry: dict[str, Any] | None,
    behaviour: str,
    phase: str,
    message: str,
    namespace_created: bool,
) -> None:
    operation: dict[str, Any] = {"initiatedBy": {"username": "slack:U1"}, "sync": sync}
    if retry is not None:
        operation["retry"] = retry
    start_operation(sim, operation, behaviour)

    state = await wait_until(lambda: finished_operation(sim), 2, "the operation finished")

    assert state["phase"] == phase
    assert state["message"].endswith(message)
    assert state["operation"] == operation  # recorded as the controller ran it
    assert state.get("retryCount", 0) == (retry or {}).get("limit", 0)
    assert (sim.get("v1", "Namespace", "kai-scheduler") is not None) is namespace_created
    created = [r["name"] for r in state["syncResult"].get("resources", [])]
    assert created == (["kai-scheduler"] if namespace_created else [])


async def test_argo_sync_held_by_a_sync_window_stays_running_and_says_so(sim: Simulator) -> None:
    start_operation(sim, {"sync": {}}, "blocked")

    def held() -> dict[str, Any] | None:
        app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
        state = (app or {}).get("status", {}).get("operationState", {})
        return app if state.get("phase") == "Running" else None

    app = await wait_until(held, 2, "the sync Running")
    assert app["operation"] == {"sync": {}}
    assert app["status"]["operationState"]["message"] == "Sync operation blocked by sync window"


async def test_reconcile_force_reset_are_recorded_as_handled_by_the_helm_controller(
    sim: Simulator,
) -> None:
    token = "2026-08-24T09:00:00.5Z"
    forced = {"reconcile.fluxcd.io/forceAt": token, "reconcile.fluxcd.io/resetAt": token}
    request(sim, HR_API, "HelmRelease", "keda", token, **forced)

    answered = await until_handled(sim, HR_API, "HelmRelease", "keda", token)

    assert answered["lastHandledForceAt"] == token
    assert answered["lastHandledResetAt"] == token


async def test_a_retrying_flux_failure_leaves_ready_false_and_reconciling_with_retry(
    sim: Simulator,
) -> None:
    retry = {"sim.kai-chatops/reconcile": "retry:Helm rollback succeeded"}
    request(sim, HR_API, "HelmRelease", "keda", "t6", **retry)

    answered = await until_handled(sim, HR_API, "HelmRelease", "keda", "t6")

    conditions = {c["type"]: c for c in answered["conditions"]}
    assert (conditions["Ready"]["status"], conditions["Ready"]["message"]) == (
        "False",
        "Helm rollback succeeded",
    )
    assert (conditions["Reconciling"]["status"], conditions["Reconciling"]["reason"]) == (
        "True",
        "ProgressingWithRetry",
    )


async def test_a_resumed_object_is_reconciled_again_on_the_next_request(sim: Simulator) -> None:
    sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch={"spec": {"suspend": True}})
    request(sim, HR_API, "HelmRelease", "keda", "t5", **{"sim.kai-chatops/reconcile": "fail"})
    ignored = await until_handled(sim, HR_API, "HelmRelease", "keda", "t5")
    assert ready(ignored)["status"] == "True"  # suspended: the failing reconcile never ran

    sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch={"spec": {"suspend": False}})
    request(sim, HR_API, "HelmRelease", "keda", "t6")

    resumed = await until_handled(sim, HR_API, "HelmRelease", "keda", "t6")
    assert ready(resumed)["status"] == "False"
    obj = sim.get(HR_API, "HelmRelease", "keda", "flux-system")
    assert obj is not None and resumed["observedGeneration"] == obj["metadata"]["generation"]
