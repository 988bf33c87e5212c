"""The order `/kai list` shows verdicts in: worst first, then namespace and name. Pure."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.models import Verdict


def worst_first(verdicts: Iterable[Verdict]) -> list[Verdict]:
    """Missing and Degraded first, Healthy last; ties by namespace, then name."""
    return sorted(verdicts, key=lambda v: (-v.health.rank, v.namespace or "", v.name))
