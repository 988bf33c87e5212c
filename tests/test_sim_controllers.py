"""The simulator's Flux and Argo CD controllers answer requests the way the real ones do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bot.sim import Simulator
from bot.sim.controller_answers import Behaviour, parse_behaviour

HR_API, KS_API, SRC_API, APP_API = (
    "helm.toolkit.fluxcd.io/v2",
    "kustomize.toolkit.fluxcd.io/v1",
    "source.toolkit.fluxcd.io/v1",
    "argoproj.io/v1alpha1",
)
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
REFRESH = "argocd.argoproj.io/refresh"


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with Simulator(scenarios=("flux", "argocd"), controllers=True) as running:
        yield running


async def eventually(check: Callable[[], Any], timeout: float = 2.0) -> Any:  # noqa: ASYNC109
    """Poll `check` until it returns something truthy, up to a deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        result = check()
        if result:
            return result
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {timeout}s")


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
    answered = await eventually(lambda: handled(sim, api, kind, name, "2026-08-24T09:00:00.1Z"))
    assert ready(answered)["status"] == "True"
    obj = sim.get(api, kind, name, "flux-system")
    assert obj is not None and obj["metadata"]["annotations"]["keep"] == "me"


async def test_a_failing_reconcile_leaves_ready_false_with_the_given_message(
    sim: Simulator,
) -> None:
    fail = {"sim.kai-chatops/reconcile": "fail:Helm upgrade failed: image pull backoff"}
    request(sim, HR_API, "HelmRelease", "keda", "t1", **fail)
    answered = await eventually(lambda: handled(sim, HR_API, "HelmRelease", "keda", "t1"))
    assert ready(answered) == {
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

    await eventually(reconciling)
    assert handled(sim, KS_API, "Kustomization", "flux-system", "t2") is None
    answered = await eventually(lambda: handled(sim, KS_API, "Kustomization", "flux-system", "t2"))
    assert [c["type"] for c in answered["conditions"]] == ["Ready"]
    assert ready(answered)["message"].startswith("Applied revision: main@sha1:3f2c9a1e")


async def test_a_controller_told_never_to_answer_leaves_the_request_unhandled(
    sim: Simulator,
) -> None:
    request(sim, HR_API, "HelmRelease", "keda", "t3", **{"sim.kai-chatops/reconcile": "never"})
    request(sim, HR_API, "HelmRelease", "kai-scheduler", "t3")  # a neighbour, to know when to look
    await eventually(lambda: handled(sim, HR_API, "HelmRelease", "kai-scheduler", "t3"))
    assert handled(sim, HR_API, "HelmRelease", "keda", "t3") is None


async def test_a_suspended_object_gets_its_request_marked_handled_and_nothing_else(
    sim: Simulator,
) -> None:
    sim.patch(HR_API, "HelmRelease", "keda", "flux-system", patch={"spec": {"suspend": True}})
    before = status(sim, HR_API, "HelmRelease", "keda", "flux-system")
    request(sim, HR_API, "HelmRelease", "keda", "t4")
    answered = await eventually(lambda: handled(sim, HR_API, "HelmRelease", "keda", "t4"))
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

    app = await eventually(refreshed)
    assert app["metadata"]["annotations"] == {"keep": "me"}
    assert app["status"]["reconciledAt"] != "2026-08-24T08:20:04Z"


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
    operation = {"initiatedBy": {"username": "slack:U1"}, "sync": {"prune": False}}
    patch = {
        "operation": operation,
        "metadata": {"annotations": {"sim.kai-chatops/sync": behaviour}},
    }
    sim.patch(APP_API, "Application", "kai-scheduler", "argocd", patch=patch)

    def finished() -> dict[str, Any] | None:
        app = sim.get(APP_API, "Application", "kai-scheduler", "argocd")
        return app if app and "operation" not in app else None

    state = (await eventually(finished))["status"]["operationState"]
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
        ("slow:2s", Behaviour("succeed", 2.0)),
        ("slow:250ms", Behaviour("succeed", 0.25)),
        ("nonsense", Behaviour("succeed", 0.5)),
    ],
)
def test_the_behaviour_annotation_is_read_with_the_default_as_fallback(
    value: str, expected: Behaviour
) -> None:
    assert parse_behaviour(value, Behaviour("succeed", 0.5)) == expected
