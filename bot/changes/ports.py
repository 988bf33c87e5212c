"""What the change pipeline needs of the service: its settings, gateways, state and clock.

`bot.service.deps.Deps` satisfies it; the pipeline reads each part when it uses it, so a part
the service (or a test) swaps is the one used.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from bot.access.approval_store import ApprovalStore
from bot.access.audit import Journal
from bot.access.gate import Gate
from bot.access.once import OnceStore
from bot.config.settings import Settings
from bot.kube.ports import KubeWriter
from bot.slack.gateway import SlackGateway


class ServiceParts(Protocol):
    """The parts of the service a change goes through."""

    @property
    def settings(self) -> Settings: ...

    @property
    def slack(self) -> SlackGateway: ...

    @property
    def gate(self) -> Gate: ...

    @property
    def confirm_key(self) -> bytes: ...

    @property
    def once(self) -> OnceStore: ...

    @property
    def approvals(self) -> ApprovalStore | None: ...

    @property
    def journal(self) -> Journal: ...

    @property
    def clock(self) -> Callable[[], datetime]: ...

    def kube_for(self, cluster: str | None) -> KubeWriter: ...
