"""`/kai why`'s answer for a pod from the objects a unit test gives it (`bot.workloads.why`,
pure), the scheduler named `kai-scheduler`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.workloads import why


def explain(
    pod: dict[str, Any],
    group: dict[str, Any] | None,
    queue: dict[str, Any] | None = None,
    *,
    bind: dict[str, Any] | None = None,
    events: Sequence[dict[str, Any]] = (),
    command: str = "/kai",
) -> why.Explanation:
    """The answer, as `/kai why` reads it (None: the object is absent)."""
    return why.explain(
        pod,
        kai_scheduler="kai-scheduler",
        group=group,
        queue=queue,
        bind_request=bind,
        events=events,
        command=command,
    )
