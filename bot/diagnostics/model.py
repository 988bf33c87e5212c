"""What a diagnosis holds: pods and their containers, events, a log tail, endpoints.

Pure data (frozen dataclasses); `bot.diagnostics.pods` and `evidence` build it from raw objects,
`bot.diagnostics.render` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from bot.core.models import Health


@dataclass(frozen=True)
class ContainerState:
    """One container of a pod as its status says: now, and how it last ended."""

    name: str
    init: bool
    ready: bool
    restarts: int
    state: str  # running | waiting | terminated | unknown
    reason: str = ""  # the waiting or terminated reason (CrashLoopBackOff, ImagePullBackOff, …)
    message: str = ""
    exit_code: int | None = None  # when terminated now
    last_reason: str = ""  # lastState.terminated: OOMKilled, Error, …
    last_exit_code: int | None = None
    image: str = ""

    @property
    def has_previous(self) -> bool:
        """Whether an earlier instance ended (so `previous=true` has a log to give)."""
        return bool(self.last_reason) or self.last_exit_code is not None


@dataclass(frozen=True)
class PodState:
    """One pod: phase, readiness, restarts, containers, and why it is not scheduled if it is not."""

    name: str
    phase: str
    containers: tuple[ContainerState, ...]
    node: str = ""
    unschedulable: str = ""  # PodScheduled False: the scheduler's message

    @property
    def main(self) -> tuple[ContainerState, ...]:
        return tuple(c for c in self.containers if not c.init)

    @property
    def ready_text(self) -> str:
        """`1/2` ready main containers, as `kubectl get pods` shows them."""
        return f"{sum(c.ready for c in self.main)}/{len(self.main)}"

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in self.containers)


@dataclass(frozen=True)
class EventLine:
    """One Warning event: on what, why, how often, when last."""

    kind: str
    name: str
    reason: str
    message: str
    count: int
    last_seen: datetime | None


@dataclass(frozen=True)
class LogTail:
    """The last lines of one container (`previous`: of the instance before the restart).

    `lines` are already cut and redacted; `unavailable` says why there are none, if so.
    """

    pod: str
    container: str
    previous: bool
    lines: tuple[str, ...] = ()
    unavailable: str = ""


@dataclass(frozen=True)
class Endpoints:
    """The EndpointSlices of a Service: ready and not-ready addresses."""

    service: str
    ready: tuple[str, ...]
    not_ready: tuple[str, ...]
    slices: int


@dataclass(frozen=True)
class Component:
    """One Deployment (or the pods behind a Service) with its evidence."""

    title: str
    health: Health
    summary: str
    pods: tuple[PodState, ...] = ()
    findings: tuple[str, ...] = ()  # plain-language lines: what is wrong and what to do
    events: tuple[EventLine, ...] = ()
    log: LogTail | None = None
    endpoints: Endpoints | None = None


@dataclass(frozen=True)
class Cause:
    """Why an alert fired, said before any component (docs/design.md §2 "Diagnose"): the failing
    condition in its own words, how bad, and what it names (operands, a Service and its
    endpoints and pods, what went with a deleted object)."""

    condition: str  # `Config kai-config DependenciesFulfilled is False (reason): message`
    health: Health
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """Everything `/kai diagnose` (or an alert's first thread reply) shows for one subject."""

    cluster: str
    subject: str  # as the user typed it: kai, keda, namespace/deployment
    at: datetime
    components: tuple[Component, ...] = ()
    notes: tuple[str, ...] = field(default=())  # about the subject itself (Service missing, …)
    cause: Cause | None = None  # under an alert: why it fired, shown first
    operands: tuple[str, ...] | None = None  # `kai`: the KAI operand Deployments found (ns/name)

    @property
    def health(self) -> Health:
        """The worst of the components and the alert's cause (Healthy when nothing was found
        wrong and no alert fires: under a firing alert it is never Healthy)."""
        found = [c.health for c in self.components]
        found += [self.cause.health] if self.cause is not None else []
        return max(found, key=lambda h: h.rank, default=Health.HEALTHY)

    @property
    def components_look_healthy(self) -> bool:
        """Whether every component looked at is healthy (or there were none)."""
        return all(c.health.is_healthy for c in self.components)
