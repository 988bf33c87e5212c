"""`/kai nodes`, `cordon` and `uncordon` as the slash command reads them (docs/design.md §1.3):
their parsed types, parsers, usage and help lines. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from bot.commands.grammar import Args, simple
from bot.commands.registry import Subcommand

# A node's name is a DNS subdomain (k8s.io/apimachinery validation IsDNS1123Subdomain).
_NODE = re.compile(r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True)
class ShowNodes:
    LABEL: ClassVar[str] = "nodes"  # its name in metrics and logs (`label_of`)
    cluster: str | None = None


@dataclass(frozen=True)
class Cordon:
    node: str
    duration: timedelta | None  # None: until uncordoned
    reason: str
    cluster: str | None = None


@dataclass(frozen=True)
class Uncordon:
    node: str
    cluster: str | None = None


def parse_cordon(args: Args) -> Cordon:
    args.take_flags()
    node = _take_node(args)
    duration = args.take_for_duration()
    reason = args.take_reason()
    return Cordon(node, duration, reason, args.finish())


def parse_uncordon(args: Args) -> Uncordon:
    args.take_flags()
    return Uncordon(_take_node(args), args.finish())


def _take_node(args: Args) -> str:
    node = args.take_word("a NODE, like gpu-node-1")
    if not _NODE.fullmatch(node):
        raise args.bad(
            f"{node!r} is not a node name (expected lowercase letters, digits, '-', '.')"
        )
    return node


SUBCOMMANDS = (
    Subcommand(
        "nodes",
        simple(ShowNodes),
        "{command} nodes [--cluster NAME]",
        "GPU nodes: GPUs capacity / allocatable / allocated, cordoned, GPU health",
        operator=False,
        makes=(ShowNodes,),
    ),
    Subcommand(
        "cordon",
        parse_cordon,
        "{command} cordon NODE [for DURATION] [REASON...]\n"
        "  e.g. {command} cordon gpu-node-3 for 2h XID 79 on GPU 2\n"
        "  DURATION: 30m, 2h, 1d, 1h30m; without it the node stays cordoned until uncordoned\n"
        "  Cordon only stops new pods landing on the node: nothing running there is drained",
        "cordon a node (spec.unschedulable), optionally for a time; asks to confirm",
        operator=True,
        makes=(Cordon,),
    ),
    Subcommand(
        "uncordon",
        parse_uncordon,
        "{command} uncordon NODE",
        "make a cordoned node schedulable again; asks to confirm",
        operator=True,
        makes=(Uncordon,),
    ),
)
