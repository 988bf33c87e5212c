"""`/kai queues`, `pending` and `why` as the slash command reads them (docs/design.md §1.3): their
parsed types, parsers, usage and help lines. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from bot.commands.grammar import Args, simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class ShowQueues:
    LABEL: ClassVar[str] = "queues"  # its name in metrics and logs (`label_of`)
    cluster: str | None = None


@dataclass(frozen=True)
class ShowPending:
    LABEL: ClassVar[str] = "pending"
    namespace: str | None = None  # None: every namespace
    all_namespaces: bool = False
    cluster: str | None = None


@dataclass(frozen=True)
class Why:
    namespace: str
    name: str  # a pod
    cluster: str | None = None


def parse_pending(args: Args) -> ShowPending:
    namespace, all_namespaces = args.take_scope()
    return ShowPending(namespace, all_namespaces, args.finish())


def parse_why(args: Args) -> Why:
    args.take_flags()
    namespace, name = args.take_object()
    return Why(namespace, name, args.finish())


SUBCOMMANDS = (
    Subcommand(
        "queues",
        simple(ShowQueues),
        "{command} queues",
        "KAI queues: tree, GPU quota and limit, allocated and requested",
        operator=False,
        makes=(ShowQueues,),
    ),
    Subcommand(
        "pending",
        parse_pending,
        "{command} pending [NAMESPACE | --all-namespaces]   (without NAMESPACE: every namespace)",
        "KAI PodGroups that cannot be scheduled, with the scheduler's reasons",
        operator=False,
        makes=(ShowPending,),
    ),
    Subcommand(
        "why",
        parse_why,
        "{command} why NAMESPACE/POD",
        "why one pod is not running: its PodGroup, queue, reasons and binds",
        operator=False,
        makes=(Why,),
    ),
)
