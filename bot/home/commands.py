"""`/kai changes` as the slash command reads it (docs/design.md §1.3): its parsed type, parser,
usage and help line. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from bot.commands.grammar import simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class ShowChanges:
    LABEL: ClassVar[str] = "changes"  # its name in metrics and logs (`label_of`)
    cluster: str | None = None  # None: every configured cluster (not only the first)


SUBCOMMANDS = (
    Subcommand(
        "changes",
        simple(ShowChanges),
        "{command} changes [--cluster NAME]   (without --cluster: every configured cluster)",
        "pauses and suspends in force on every cluster, timed or not: who, why, since, until",
        operator=False,
        makes=(ShowChanges,),
    ),
)
