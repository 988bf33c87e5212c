"""The imitation's KAI releases (testbed/sim/kai_releases.py, kai_status.py, kai_operator.py):
the scenarios reshaped as each release's install leaves them, and the operator's status pass
agreeing with them, so a pass over a healthy install of any release writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from testbed.sim import Simulator, kai_operator, kai_releases

KAI = "kai.scheduler/v1"
RELEASES = list(kai_releases.RELEASES)


def conditions(sim: Simulator, kind: str, name: str) -> dict[str, dict[str, Any]]:
    found = sim.get(KAI, kind, name) or {}
    return {c["type"]: c for c in found["status"]["conditions"]}


def binder_labels(sim: Simulator) -> dict[str, str]:
    binder = sim.get("apps/v1", "Deployment", "binder", "kai-scheduler") or {}
    labels: dict[str, str] = binder["metadata"]["labels"]
    return labels


@pytest.mark.parametrize("release", RELEASES)
def test_a_healthy_install_of_each_release_is_written_as_that_release_writes_it(
    release: str,
) -> None:
    sim = Simulator(scenarios=["kai-healthy"], kai_release=release)
    kai = sim.kai

    for kind, name in (("Config", "kai-config"), ("SchedulingShard", "default")):
        found = conditions(sim, kind, name)
        assert ("Ready" in found) is kai.ready
        assert found["Reconciling"]["status"] == ("False" if kai.ready else "True")
    managed = binder_labels(sim).get("app.kubernetes.io/managed-by") == "kai-operator"
    assert managed is kai.managed_by_label
    image = (sim.get("apps/v1", "Deployment", "binder", "kai-scheduler") or {})["spec"]
    assert image["template"]["spec"]["containers"][0]["image"].endswith(f":{kai.tag}")


@pytest.mark.parametrize("release", RELEASES)
def test_the_operators_pass_over_a_healthy_install_changes_no_condition(release: str) -> None:
    """It writes nothing at all, but on v0.13, whose every pass marks Reconciling True then
    False again (the loop #1229 fixed in v0.14)."""
    sim = Simulator(scenarios=["kai-healthy"], kai_release=release)
    before = conditions(sim, "Config", "kai-config")

    written = kai_operator.reconcile(sim.store, sim.kai)

    after = conditions(sim, "Config", "kai-config")
    assert (written != set()) is (release == "v0.13")
    assert {t: c["status"] for t, c in after.items()} == {t: c["status"] for t, c in before.items()}
    assert {t: after[t] for t in after if t != "Reconciling"} == {
        t: before[t] for t in before if t != "Reconciling"
    }


def test_the_releases_follow_one_another_as_kai_shipped_them() -> None:
    """Each behaviour from the release that brought it on (KAI-Scheduler's tags)."""
    by_name = kai_releases.RELEASES
    assert [r.tag for r in by_name.values()] == ["v0.12.0", "v0.13.0", "v0.16.8", "v0.17.0"]
    assert [r.ready for r in by_name.values()] == [False, True, True, True]
    assert [r.marks_every_pass for r in by_name.values()] == [True, True, False, False]
    assert [r.evicts_completing_gangs for r in by_name.values()] == [False, False, True, True]
    assert [r.preemption_delay for r in by_name.values()] == [False, False, False, True]
    assert by_name["v0.13"].module == "github.com/NVIDIA/KAI-scheduler"
    assert by_name["v0.16"].module == "github.com/kai-scheduler/KAI-scheduler"


def test_a_release_the_imitation_does_not_play_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'v0\.14' is not imitated: one of v0\.12, v0\.13"):
        Simulator(kai_release="v0.14")
