"""`/kai approve CHANGE_ID` as the slash command reads it: a second operator's approval of a
change waiting on a cluster of `access.approval`. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.commands.grammar import Args
from bot.commands.registry import Subcommand

# The IDs `bot.access.approvals` makes: 8 letters and digits (case does not matter).
_CHANGE_ID = re.compile(r"[A-Za-z0-9]{8}")


@dataclass(frozen=True)
class Approve:
    change_id: str
    cluster: str | None = None


def parse_approve(args: Args) -> Approve:
    args.take_flags()
    change_id = args.take_word("a CHANGE_ID, as the approval request shows it")
    if not _CHANGE_ID.fullmatch(change_id):
        raise args.bad(f"{change_id!r} is not a CHANGE_ID (8 letters and digits, like 7KQ2MXD4)")
    return Approve(change_id.upper(), args.finish())


SUBCOMMANDS = (
    Subcommand(
        "approve",
        parse_approve,
        "{command} approve CHANGE_ID\n"
        "  CHANGE_ID: as the approval request shows it (a change on a cluster of "
        "access.approval waits 15 minutes for an approver other than the requester)",
        "approve a change another operator asked for on a protected cluster (access.approval)",
        operator=True,
        makes=(Approve,),
    ),
)
