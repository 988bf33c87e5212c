"""One container's state as a diagnosis reads and says it (docs/design.md §2 "Diagnose"): the
status read whole, whether it is failing, which container's log is shown, and the sentence for
each way a container can be (waiting, exited, restarted, not ready, never started).

Pure tables over container statuses shaped as the kubelet writes them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.diagnostics import pods as rules
from bot.diagnostics.model import ContainerState, PodState


def test_a_container_status_is_read_whole() -> None:
    raw = {
        "metadata": {"name": "api-1"},
        "spec": {
            "nodeName": "gpu-1",
            "initContainers": [{"name": "migrate", "image": "reg/migrate:3"}],
            "containers": [{"name": "api", "image": "reg/api:1.2"}],
        },
        "status": {
            "phase": "Running",
            "initContainerStatuses": [
                {"name": "migrate", "ready": True, "restartCount": 0,
                 "state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
            ],
            "containerStatuses": [
                {"name": "api", "ready": "true", "restartCount": 2, "image": "reg/api@sha256:1",
                 "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "token=abc123def"}},
                 "lastState": {"terminated": {"reason": "Error", "exitCode": 3}}},
            ],
        },
    }  # fmt: skip

    assert rules.read_pod(raw) == PodState(
        "api-1",
        "Running",
        (
            ContainerState("migrate", True, True, 0, "terminated", "Completed", "", 0, "", None,
                           "reg/migrate:3"),
            ContainerState("api", False, False, 2, "waiting", "CrashLoopBackOff",
                           "token=[redacted]", None, "Error", 3, "reg/api@sha256:1"),
        ),
        node="gpu-1",
    )  # fmt: skip


def test_a_status_without_state_or_phase_is_unknown_and_takes_its_image_from_the_spec() -> None:
    raw = {
        "metadata": {"name": "api-1"},
        "spec": {"containers": [{"name": "api", "image": "reg/api:1.2"}]},
        "status": {"containerStatuses": [{"name": "api", "state": {}}]},
    }

    assert rules.read_pod(raw) == PodState(
        "api-1",
        "Unknown",
        (ContainerState("api", False, False, 0, "unknown", image="reg/api:1.2"),),
    )


def test_a_pod_the_scheduler_refused_says_why_in_its_words() -> None:
    unscheduled = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    scheduled = {"type": "PodScheduled", "status": "True", "message": "fine"}

    def read(condition: dict[str, Any]) -> str:
        raw = {"metadata": {"name": "p"}, "status": {"conditions": [condition]}}
        return rules.read_pod(raw).unschedulable

    assert read(unscheduled) == "Unschedulable"
    assert read({**unscheduled, "message": "0/3 nodes: password=hunter2"}) == (
        "0/3 nodes: password=[redacted]"
    )
    assert read(scheduled) == ""


def box(
    state: str,
    reason: str = "",
    *,
    init: bool = False,
    ready: bool = False,
    restarts: int = 0,
    exit_code: int | None = None,
    last: str = "",
    last_code: int | None = None,
    message: str = "",
    image: str = "reg/api:1.2",
) -> ContainerState:
    return ContainerState(
        "api", init, ready, restarts, state, reason, message, exit_code, last, last_code, image
    )


LOG = ": the log tail of that instance says why"
SIGKILL = ": it was killed (SIGKILL), often for memory or a failed liveness probe"
OOM = ": it ran out of memory; raise its memory limit or find what grew"
FINDINGS = {
    "waiting-crashloop-once": (
        box("waiting", "CrashLoopBackOff", restarts=1, last="Error", last_code=2),
        f"CrashLoopBackOff, restarted once; the last instance ended with Error (exit code 2){LOG}",
    ),
    "crashloop-sigkill": (
        box("waiting", "CrashLoopBackOff", restarts=4, last_code=137),
        f"CrashLoopBackOff, restarted 4 times; the last instance ended with exit code 137{SIGKILL}",
    ),
    "crashloop-no-code": (
        box("waiting", "CrashLoopBackOff", restarts=2, last="Completed"),
        "CrashLoopBackOff, restarted 2 times; the last instance ended with Completed "
        "(no exit code)",
    ),
    "pull-without-image": (
        box("waiting", "ErrImagePull", image=""),
        "ErrImagePull: image ? cannot be pulled; check its name and tag, that the registry is "
        "reachable, and the pull secret",
    ),
    "never-pull": (
        box("waiting", "ErrImageNeverPull", message="never"),
        "ErrImageNeverPull: image reg/api:1.2 cannot be pulled; check its name and tag, that the "
        "registry is reachable, and the pull secret: never",
    ),
    "invalid-image": (
        box("waiting", "InvalidImageName"),
        "InvalidImageName: image reg/api:1.2 cannot be pulled; check its name and tag, that the "
        "registry is reachable, and the pull secret",
    ),
    "create-error": (
        box("waiting", "CreateContainerError"),
        "CreateContainerError: a ConfigMap, Secret or key it refers to is missing or wrong",
    ),
    "run-error": (
        box("waiting", "RunContainerError", message="x"),
        "RunContainerError: a ConfigMap, Secret or key it refers to is missing or wrong: x",
    ),
    "starting": (box("waiting", "ContainerCreating"), ""),
    "initializing": (box("waiting", "PodInitializing"), ""),
    "starting-again": (
        box("waiting", "ContainerCreating", restarts=1),
        "waiting: ContainerCreating",
    ),
    "waiting-no-reason": (box("waiting", message="hm"), "waiting: no reason given: hm"),
    "exited-error": (
        box("terminated", "Error", exit_code=1),
        f"exited with Error (exit code 1){LOG}",
    ),
    "exited-sigkill": (
        box("terminated", "Error", exit_code=137),
        f"exited with Error (exit code 137){SIGKILL}",
    ),
    "exited-oom": (
        box("terminated", "OOMKilled", exit_code=137),
        f"exited with OOMKilled (exit code 137){OOM}",
    ),
    "exited-negative": (box("terminated", exit_code=-1), "exited with exit code -1"),
    "exited-one-without-reason": (box("terminated", exit_code=1), f"exited with exit code 1{LOG}"),
    "exited-zero": (box("terminated", "Completed", exit_code=0), ""),
    "exited-no-code": (box("terminated", "Completed"), ""),
    "running-restarted-once": (
        box("running", ready=True, restarts=1, last="Error", last_code=1),
        f"running, but restarted once; the last instance ended with Error (exit code 1){LOG}",
    ),
    "running-restarted-code-only": (
        box("running", ready=True, restarts=1, last_code=2),
        f"running, but restarted once; the last instance ended with exit code 2{LOG}",
    ),
    "crashloop-error-without-code": (
        box("waiting", "CrashLoopBackOff", restarts=2, last="Error"),
        f"CrashLoopBackOff, restarted 2 times; the last instance ended with Error (no exit code)"
        f"{LOG}",
    ),
    "running-restarted-cleanly": (
        box("running", ready=True, restarts=3, last="Completed", last_code=0),
        "running, but restarted 3 times; the last instance ended with Completed (exit code 0)",
    ),
    "running-init-not-ready": (box("running", init=True), ""),
    "running-ready": (box("running", ready=True), ""),
    "unknown": (box("unknown"), ""),
}


@pytest.mark.parametrize(("container", "line"), FINDINGS.values(), ids=list(FINDINGS))
def test_each_container_state_reads_as_one_sentence(container: ContainerState, line: str) -> None:
    assert rules.container_finding(container) == line


FAILING = {
    "crashloop": (box("waiting", "CrashLoopBackOff", restarts=3), True),
    "creating": (box("waiting", "ContainerCreating"), False),
    "initializing-again": (box("waiting", "PodInitializing", restarts=1), True),
    "pull": (box("waiting", "ImagePullBackOff"), True),
    "exited-nonzero": (box("terminated", exit_code=1), True),
    "main-exited-zero": (box("terminated", exit_code=0), True),  # a main container must run
    "init-done": (box("terminated", exit_code=0, init=True), False),
    "running-ready": (box("running", ready=True), False),
    "running-restarted": (box("running", ready=True, restarts=1), True),
    "running-not-ready": (box("running"), True),
    "init-running": (box("running", init=True), False),
    "unknown": (box("unknown", ready=True), False),
}


@pytest.mark.parametrize(("container", "failing"), FAILING.values(), ids=list(FAILING))
def test_a_container_is_failing_when_it_does_not_do_its_job(
    container: ContainerState, failing: bool
) -> None:
    assert rules.is_failing(container) is failing


def named(name: str, container: ContainerState) -> ContainerState:
    return dataclasses.replace(container, name=name)


def test_the_container_to_look_at_is_a_failing_init_container_else_the_most_restarted() -> None:
    init_running = named("setup", box("running", init=True, restarts=2))
    init_failed = named("migrate", box("terminated", exit_code=1, init=True))
    waiting = named("sidecar", box("waiting", "CrashLoopBackOff", restarts=1))
    restarted = named("api", box("running", ready=True, restarts=9))
    calm = named("calm", box("running", ready=True))

    def chosen(*containers: ContainerState) -> str | None:
        found = rules.failing_container(PodState("p", "Running", containers))
        return None if found is None else found.name

    assert chosen(init_running, init_failed, waiting, restarted) == "migrate"
    assert chosen(init_running, restarted, calm) == "api"
    assert chosen(waiting, restarted) == "sidecar"  # waiting on a failure comes first
    assert chosen(restarted, named("api2", box("running", ready=True, restarts=10))) == "api2"
    assert chosen(calm) is None


def test_the_log_shown_is_of_the_pod_whose_container_fails_worst() -> None:
    pods = [
        PodState("a", "Running", (named("x", box("running", ready=True, restarts=5)),)),
        PodState("b", "Running", (named("y", box("waiting", "CrashLoopBackOff", restarts=1)),)),
        PodState("c", "Running", (named("z", box("running", ready=True, restarts=7)),)),
        PodState("d", "Running", (named("w", box("running", ready=True)),)),
    ]

    first = rules.first_failing(pods)
    without_waiting = rules.first_failing([pods[0], pods[2], pods[3]])

    assert first is not None and (first[0].name, first[1].name) == ("b", "y")
    assert without_waiting is not None and without_waiting[0].name == "c"
    assert rules.first_failing([pods[3]]) is None


def test_a_pod_says_each_failing_container_and_an_init_container_blocks_the_rest() -> None:
    done = named("migrate", box("terminated", "Completed", exit_code=0, init=True))
    failed = named("seed", box("terminated", "Error", exit_code=1, init=True))
    stuck = named("wait-db", box("waiting", "CrashLoopBackOff", init=True, restarts=1))
    running_init = named("proxy", box("running", init=True, restarts=1, last="Error", last_code=1))

    lines = rules.pod_findings(PodState("p", "Pending", (done, failed, stuck, running_init)))

    assert lines == [
        f"p init container seed: exited with Error (exit code 1){LOG}",
        "p: its other containers wait until seed succeeds",
        "p init container wait-db: CrashLoopBackOff, restarted once; the last instance ended "
        "with no exit code",
        "p: its other containers wait until wait-db succeeds",
        f"p init container proxy: running, but restarted once; the last instance ended with "
        f"Error (exit code 1){LOG}",
    ]


def test_a_failed_pod_with_nothing_else_to_say_says_it_failed() -> None:
    assert rules.pod_findings(PodState("p", "Failed", ())) == ["p has failed (phase Failed)"]
    assert rules.pod_findings(PodState("p", "Succeeded", ())) == []


@pytest.mark.parametrize(
    ("replicas", "line"),
    [
        (0, "Deployment a/b is scaled to 0 replicas: nothing runs"),
        (1, "Deployment a/b wants 1 replica but has no pods: the ReplicaSet"),
        (3, "Deployment a/b wants 3 replicas but has no pods: the ReplicaSet"),
    ],
)
def test_a_deployment_without_pods_says_why_there_may_be_none(replicas: int, line: str) -> None:
    assert rules.no_pods_finding("Deployment a/b", replicas).startswith(line)


def test_every_pods_findings_in_pod_order() -> None:
    pods = [PodState("b", "Failed", ()), PodState("a", "Running", ()), PodState("c", "Failed", ())]

    assert rules.all_findings(pods) == [
        "b has failed (phase Failed)",
        "c has failed (phase Failed)",
    ]
