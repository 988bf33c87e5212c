"""`/kai list KIND` as the slash command reads it (docs/design.md §1.3): its parsed type, parser,
usage and help line. Pure.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from bot.commands.grammar import Args
from bot.commands.kinds import KIND_LINE, LIST_KINDS, ListKind
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class ListObjects:
    kind: ListKind
    namespace: str | None = None  # None and not all_namespaces: the kind's usual namespaces
    all_namespaces: bool = False
    cluster: str | None = None


def parse_list(args: Args) -> ListObjects:
    word = args.take_word("a KIND, like hr, ks, app, sj or so").lower()
    kind = LIST_KINDS.get(word)
    if kind is None:
        hint = close_names(word, list(LIST_KINDS), 1)
        maybe = f" (did you mean {hint[0]}?)" if hint else ""
        raise args.bad(f"unknown kind {word!r}{maybe}")
    namespace, all_namespaces = args.take_scope()
    return ListObjects(kind, namespace, all_namespaces, args.finish())


def close_names(
    word: str, choices: Sequence[str], count: int = 3, cutoff: float = 0.6
) -> list[str]:
    """The choices closest to a mistyped `word`, closest first (none when nothing is close)."""
    return difflib.get_close_matches(word, choices, n=count, cutoff=cutoff)


SUBCOMMANDS = (
    Subcommand(
        "list",
        parse_list,
        "{command} list KIND [NAMESPACE | --all-namespaces]\n"
        f"{KIND_LINE}"
        "        ocirepository|ocirepo, application|app, scaledjob|sj, scaledobject|so\n"
        "  without NAMESPACE: flux-system (Flux), argocd (app), keda.namespaces (sj, so)",
        "list Flux objects, Argo CD Applications or KEDA objects with verdicts",
        operator=False,
        makes=(ListObjects,),
    ),
)
