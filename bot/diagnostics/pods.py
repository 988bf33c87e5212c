"""Pods as a diagnosis reads them: phase, containers, and plain-language lines of what is wrong.

Pure: raw Pod objects in, `PodState` and sentences out. The lines say what the state means and
what to do about it (an OOMKilled container needs memory, an image that cannot be pulled needs
its name or pull secret checked), so the on-call does not have to decode kubelet reasons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.core import conditions
from bot.core.models import RawObject
from bot.core.redaction import redact
from bot.diagnostics.model import ContainerState, PodState

OOM_EXIT = 137  # 128 + SIGKILL: what an OOM kill (or any SIGKILL) exits with
_PULL_FAILURES = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_CONFIG_FAILURES = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")
_STARTING = ("ContainerCreating", "PodInitializing")


def read_pod(pod: RawObject) -> PodState:
    """The parts of a Pod a diagnosis shows."""
    status, spec = conditions.status(pod), conditions.spec(pod)
    images = {
        str(x.get("name")): str(x.get("image", ""))
        for x in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    }
    containers = [
        _read_container(s, init=True, image=images.get(str(s.get("name")), ""))
        for s in status.get("initContainerStatuses") or []
    ]
    containers += [
        _read_container(s, init=False, image=images.get(str(s.get("name")), ""))
        for s in status.get("containerStatuses") or []
    ]
    scheduled = conditions.find_condition(conditions.list_conditions(pod), "PodScheduled")
    unschedulable = ""
    if scheduled is not None and conditions.condition_status(scheduled) == "False":
        unschedulable = redact(
            conditions.condition_message(scheduled) or conditions.condition_reason(scheduled)
        )
    return PodState(
        name=conditions.object_name(pod),
        phase=conditions.as_text(status.get("phase")) or "Unknown",
        containers=tuple(containers),
        node=conditions.as_text(spec.get("nodeName")),
        unschedulable=unschedulable,
    )


def _read_container(status: Mapping[str, Any], *, init: bool, image: str) -> ContainerState:
    state = conditions.as_mapping(status.get("state"))
    last = conditions.as_mapping(conditions.as_mapping(status.get("lastState")).get("terminated"))
    now_name = next((k for k in ("running", "waiting", "terminated") if k in state), "unknown")
    now = conditions.as_mapping(state.get(now_name))
    return ContainerState(
        name=conditions.as_text(status.get("name")),
        init=init,
        ready=status.get("ready") is True,
        restarts=conditions.as_int(status.get("restartCount")) or 0,
        state=now_name,
        reason=conditions.as_text(now.get("reason")),
        message=redact(conditions.as_text(now.get("message"))),
        exit_code=conditions.as_int(now.get("exitCode")) if now_name == "terminated" else None,
        last_reason=conditions.as_text(last.get("reason")),
        last_exit_code=conditions.as_int(last.get("exitCode")),
        image=conditions.as_text(status.get("image")) or image,
    )


def is_failing(container: ContainerState) -> bool:
    """Not doing its job: waiting on a failure, exited non-zero, restarting, or not ready."""
    if container.state == "waiting":
        return container.reason not in _STARTING or container.restarts > 0
    if container.state == "terminated":
        return container.exit_code != 0 or not container.init
    return container.restarts > 0 or (not container.ready and not container.init)


def failing_container(pod: PodState) -> ContainerState | None:
    """The container to look at first: a failing init container (it blocks the rest), else the
    failing main container that restarted most."""
    for container in pod.containers:
        if container.init and is_failing(container) and container.state != "running":
            return container
    failing = [x for x in pod.main if is_failing(x)]
    return max(failing, key=lambda x: (x.state == "waiting", x.restarts), default=None)


def pod_findings(pod: PodState) -> list[str]:
    """What is wrong with one pod, one sentence each, with what to do; empty when it is fine."""
    if pod.unschedulable:
        return [f"{pod.name} is not scheduled: {pod.unschedulable}"]
    lines: list[str] = []
    for container in pod.containers:
        if container.init and container.state == "terminated" and container.exit_code == 0:
            continue
        line = container_finding(container)
        if line:
            where = "init container" if container.init else "container"
            lines.append(f"{pod.name} {where} {container.name}: {line}")
            if container.init and container.state != "running":
                lines.append(
                    f"{pod.name}: its other containers wait until {container.name} succeeds"
                )
    if pod.phase == "Failed" and not lines:
        lines.append(f"{pod.name} has failed (phase Failed)")
    return lines


def container_finding(container: ContainerState) -> str:
    """One container's problem in plain words, or "" when it runs as it should."""
    if container.state == "waiting":
        return _waiting_finding(container)
    if container.state == "terminated" and container.exit_code not in (0, None):
        return f"exited with {_ending(container.reason, container.exit_code)}" + _advice(
            container.reason, container.exit_code
        )
    if container.state == "running" and container.restarts:
        return (
            f"running, but restarted {_times(container.restarts)}; the last instance ended with "
            f"{_ending(container.last_reason, container.last_exit_code)}"
            + _advice(container.last_reason, container.last_exit_code)
        )
    if container.state == "running" and not container.ready and not container.init:
        return "running but not ready: its readiness probe fails (see the events)"
    return ""


def _waiting_finding(container: ContainerState) -> str:
    reason, message = container.reason, container.message
    said = f": {message}" if message else ""
    if reason == "CrashLoopBackOff":
        ending = _ending(container.last_reason, container.last_exit_code)
        return (
            f"CrashLoopBackOff, restarted {_times(container.restarts)}; the last instance ended "
            f"with {ending}" + _advice(container.last_reason, container.last_exit_code)
        )
    if reason in _PULL_FAILURES:
        return (
            f"{reason}: image {container.image or '?'} cannot be pulled; check its name and tag, "
            f"that the registry is reachable, and the pull secret{said}"
        )
    if reason in _CONFIG_FAILURES:
        return f"{reason}: a ConfigMap, Secret or key it refers to is missing or wrong{said}"
    if reason in _STARTING and not container.restarts:
        return ""
    return f"waiting: {reason or 'no reason given'}{said}"


def _ending(reason: str, exit_code: int | None) -> str:
    code = f"exit code {exit_code}" if exit_code is not None else "no exit code"
    return f"{reason} ({code})" if reason else code


def _advice(reason: str, exit_code: int | None) -> str:
    if reason == "OOMKilled":
        return ": it ran out of memory; raise its memory limit or find what grew"
    if exit_code == OOM_EXIT:
        return ": it was killed (SIGKILL), often for memory or a failed liveness probe"
    if reason == "Error" or (exit_code or 0) > 0:
        return ": the log tail of that instance says why"
    return ""


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def no_pods_finding(title: str, replicas: int) -> str:
    """Why a Deployment may have no pods at all, and where to look."""
    if replicas == 0:
        return f"{title} is scaled to 0 replicas: nothing runs"
    return (
        f"{title} wants {replicas} replica{'s' if replicas != 1 else ''} but has no pods: the "
        "ReplicaSet cannot create them (quota, admission webhook, or a missing service account); "
        "its Warning events below say which"
    )


def all_findings(pods: Iterable[PodState]) -> list[str]:
    """Every pod's findings, in pod order."""
    return [line for pod in pods for line in pod_findings(pod)]


def first_failing(pods: Sequence[PodState]) -> tuple[PodState, ContainerState] | None:
    """The pod and container whose log tail the diagnosis shows: the most restarted failure."""
    candidates = [(pod, x) for pod in pods if (x := failing_container(pod)) is not None]
    if not candidates:
        return None
    return max(candidates, key=lambda pair: (pair[1].state == "waiting", pair[1].restarts))
