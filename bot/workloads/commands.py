"""`/kai queues`, `pending` and `why` as the slash command reads them (docs/design.md §1.3): their
parsed types, parsers, usage and help lines. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.grammar import Args, simple
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class Queues:
    cluster: str | None = None


@dataclass(frozen=True)
class Pending:
    namespace: str | None = None  # None: every namespace
    all_namespaces: bool = False
    cluster: str | None = None


@dataclass(frozen=True)
class Why:
    namespace: str
    name: str  # a pod
    cluster: str | None = None


def parse_pending(args: Args) -> Pending:
    namespace, all_namespaces = args.take_scope()
    return Pending(namespace, all_namespaces, args.finish())


def parse_why(args: Args) -> Why:
    args.take_flags()
    namespace, name = args.take_object()
    return Why(namespace, name, args.finish())


SUBCOMMANDS = (
    Subcommand(
        "queues",
        simple(Queues),
        "{command} queues",
        "KAI queues: tree, GPU quota and limit, allocated and requested",
        operator=False,
        makes=(Queues,),
    ),
    Subcommand(
        "pending",
        parse_pending,
        "{command} pending [NAMESPACE | --all-namespaces]   (without NAMESPACE: every namespace)",
        "KAI PodGroups that cannot be scheduled, with the scheduler's reasons",
        operator=False,
        makes=(Pending,),
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
