"""`/kai health` as the slash command reads it (docs/design.md §1.3). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.grammar import simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class Health:
    cluster: str | None = None


SUBCOMMANDS = (
    Subcommand(
        "health",
        simple(Health),
        "{command} health [--cluster NAME]",
        "KAI Scheduler and external-metrics (KEDA) health of a cluster",
        operator=False,
        makes=(Health,),
    ),
)
