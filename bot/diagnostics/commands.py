"""`/kai diagnose` as the slash command reads it (docs/design.md §1.3): its parsed type, parser,
usage and help line. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.commands.grammar import Args
from bot.commands.registry import Subcommand


@dataclass(frozen=True)
class Diagnose:
    """`diagnose kai|keda|NAMESPACE/DEPLOYMENT`: `target` is kai, keda, or "" for a Deployment."""

    target: Literal["kai", "keda", ""]
    namespace: str = ""
    name: str = ""
    cluster: str | None = None


def parse_diagnose(args: Args) -> Diagnose:
    args.take_flags()
    word = args.take_word("kai, keda or NAMESPACE/DEPLOYMENT")
    if word.lower() in ("kai", "keda"):
        target: Literal["kai", "keda"] = "kai" if word.lower() == "kai" else "keda"
        return Diagnose(target, cluster=args.finish())
    args.words.insert(0, word)
    namespace, name = args.take_object()
    return Diagnose("", namespace, name, args.finish())


SUBCOMMANDS = (
    Subcommand(
        "diagnose",
        parse_diagnose,
        "{command} diagnose kai|keda|NAMESPACE/DEPLOYMENT\n"
        "  kai: the KAI operator and every KAI Deployment that is not available\n"
        "  keda: the pods and endpoints behind the external-metrics APIService",
        "pods, restarts, last termination, Warning events and log tail (also the first reply "
        "in each alert's thread)",
        operator=False,
        makes=(Diagnose,),
    ),
)
