"""The order `/kai list` shows verdicts in: worst first, then namespace and name. Pure."""

from __future__ import annotations

from bot.core.models import Verdict


def worst_first_key(verdict: Verdict) -> tuple[int, str, str]:
    """Sorting by it puts Missing and Degraded first, Healthy last; ties by namespace, then
    name."""
    return (-verdict.health.rank, verdict.namespace or "", verdict.name)
