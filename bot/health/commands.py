"""`/kai health` as the slash command reads it (docs/design.md §1.3). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from bot.commands.grammar import simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class CheckHealth:
    LABEL: ClassVar[str] = "health"  # its name in metrics and logs (`label_of`)
    cluster: str | None = None


SUBCOMMANDS = (
    Subcommand(
        "health",
        simple(CheckHealth),
        "{command} health [--cluster NAME]",
        "KAI Scheduler and external-metrics (KEDA) health of a cluster",
        operator=False,
        makes=(CheckHealth,),
    ),
)
