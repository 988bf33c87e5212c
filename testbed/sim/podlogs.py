"""Container logs of the simulated cluster and the `pods/log` answer a real API server gives.

`PodLogs` holds the text each container printed (current and previous instance); `read_log`
answers `GET .../pods/NAME/log` from the pod object and that text, refusing what kube-apiserver
(`pkg/registry/core/pod/strategy.go` `LogLocation`, `ValidatePodLogOptions`) and the kubelet
(`pkg/kubelet/kubelet_pods.go` `validateContainerLogStatus`) refuse, with their words. No HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from testbed.sim import status as st

_LogKey = tuple[str, str, str, bool]  # namespace, pod, container, previous


class PodLogs:
    """What each container wrote, by namespace, pod, container and instance (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._text: dict[_LogKey, str] = {}

    def write(
        self, namespace: str, pod: str, container: str, text: str, *, previous: bool = False
    ) -> None:
        """Set the whole log of one container instance (the previous one with `previous`)."""
        with self._lock:
            self._text[(namespace, pod, container, previous)] = text

    def text(self, namespace: str, pod: str, container: str, previous: bool) -> str:
        """The log as written so far ("" when the container printed nothing)."""
        with self._lock:
            return self._text.get((namespace, pod, container, previous), "")


def read_log(pod: Mapping[str, Any], query: Mapping[str, str], logs: PodLogs) -> str:
    """The body of `GET pods/NAME/log` for `pod` as stored, with `container`, `previous`,
    `tailLines` read as the API server reads them.

    Raises:
        ApiError: 400 for a missing or unknown container, an instance that does not exist (the
            kubelet's words), or an unreadable `tailLines`; 422 for a negative one.
    """
    metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace", ""))
    container = _container(spec, name, query.get("container", ""))
    tail = _tail_lines(name, query.get("tailLines"))
    if not spec.get("nodeName"):
        return ""  # not scheduled: the API server has no kubelet to ask and answers empty
    previous = (query.get("previous") or "").lower() == "true"
    _check_instance(pod, name, container, previous)
    text = logs.text(namespace, name, container, previous)
    if tail is None:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(lines[-tail:]) if tail else ""


def _container(spec: Mapping[str, Any], pod: str, wanted: str) -> str:
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    inits = [str(c.get("name")) for c in spec.get("initContainers") or []]
    if wanted:
        if wanted not in names + inits:
            raise st.ApiError(400, f"container {wanted} is not valid for pod {pod}")
        return wanted
    if len(names) == 1:
        return names[0]
    if not names:
        raise st.ApiError(400, f"a container name must be specified for pod {pod}")
    message = (
        f"a container name must be specified for pod {pod}, choose one of: [{' '.join(names)}]"
    )
    if inits:
        message += f" or one of the init containers: [{' '.join(inits)}]"
    raise st.ApiError(400, message)


def _tail_lines(pod: str, raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        tail = int(raw)
    except ValueError:
        raise st.ApiError(400, f'tailLines: invalid value "{raw}": not an integer') from None
    if tail < 0:
        cause = f"tailLines: Invalid value: {tail}: must be greater than or equal to 0"
        raise st.invalid("PodLogOptions", "", pod, cause)
    return tail


def _check_instance(pod: Mapping[str, Any], name: str, container: str, previous: bool) -> None:
    """The kubelet's refusals: no previous instance, or a container that never started."""
    found = _container_status(pod.get("status") or {}, container)
    if found is None:
        raise st.ApiError(400, f'container "{container}" in pod "{name}" is not available')
    last = (found.get("lastState") or {}).get("terminated")
    state = found.get("state") or {}
    if previous:
        if not last:
            message = f'previous terminated container "{container}" in pod "{name}" not found'
            raise st.ApiError(400, message)
        return
    if state.get("running") or state.get("terminated") or last:
        return
    waiting = state.get("waiting")
    if waiting is None:
        message = f'container "{container}" in pod "{name}" is waiting to start - no logs yet'
        raise st.ApiError(400, message)
    raise st.ApiError(400, _waiting_text(container, name, str(waiting.get("reason", ""))))


def _waiting_text(container: str, pod: str, reason: str) -> str:
    start = f'container "{container}" in pod "{pod}" is waiting to start'
    if reason == "ErrImagePull":
        return f"{start}: image can't be pulled"
    if reason == "ImagePullBackOff":
        return f"{start}: trying and failing to pull image"
    return f"{start}: {reason}"


def _container_status(status: Mapping[str, Any], container: str) -> Mapping[str, Any] | None:
    for key in ("containerStatuses", "initContainerStatuses"):
        for entry in status.get(key) or []:
            if entry.get("name") == container:
                return dict(entry)
    return None
