"""The demo console's steps that need no console state: `sim`, `wait`, `wait for`'s words, and
the error a step raises when it cannot do what it says (`--run` stops there and exits 1).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from datetime import timedelta

from bot.core import durations
from testbed.sim import breakage
from testbed.stack import Stack

WAIT_FOR_DEFAULT = timedelta(seconds=60)


class StepFailed(Exception):
    """A console step that could not do what it says (an unknown step, no such button, text
    that never came); `--run` stops there and exits 1."""


async def wait(args: Sequence[str]) -> None:
    """`wait 10s`: let the service run (alerts fire after `alerts.hold`)."""
    try:
        span = durations.parse_duration(args[0] if args else "")
    except ValueError as e:
        raise StepFailed(f"wait DURATION, like wait 10s: {e}") from None
    print(f"(waiting {durations.format_duration(span)})")
    await asyncio.sleep(span.total_seconds())


def parse_wait_for(args: Sequence[str]) -> tuple[str, timedelta]:
    """`TEXT [up to DURATION]` into the text and the deadline (60s without `up to`).

    Raises:
        StepFailed: no text, or a duration that does not parse.
    """
    words = list(args)
    span = WAIT_FOR_DEFAULT
    if len(words) >= 3 and words[-3:-1] == ["up", "to"]:
        try:
            span = durations.parse_duration(words[-1])
        except ValueError as e:
            raise StepFailed(f"wait for TEXT up to DURATION, like up to 2m: {e}") from None
        words = words[:-3]
    if not words:
        raise StepFailed("wait for TEXT [up to DURATION], like wait for [CRITICAL] up to 1m")
    return " ".join(words), span


def run_sim_action(stack: Stack, args: Sequence[str]) -> str:
    """`sim ACTION [WORD...]`: break or heal the simulated cluster (`sim gpu_lost gpu-node-2`);
    `sim` alone lists the actions.

    Raises:
        StepFailed: no such action, or words it does not take.
    """
    described = breakage.describe_actions()
    listing = "\n".join(f"  sim {name:<22} {doc}" for name, doc in described.items())
    if not args:
        return f"Simulator actions:\n{listing}"
    if args[0] not in breakage.ACTIONS:
        raise StepFailed(f"no simulator action {args[0]!r}; the actions:\n{listing}")
    action, words = breakage.ACTIONS[args[0]], list(args[1:])
    taken = [
        p
        for p in inspect.signature(action).parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    if len(words) > len(taken) - 1:
        raise StepFailed(f"sim {args[0]} does not take {' '.join(words)!r}")
    try:
        action(stack.sim, *words)
    except LookupError as e:  # a node the scenario does not have, say
        raise StepFailed(str(e)) from None
    said = f" ({' '.join(words)})" if words else ""
    return f"simulator: {described[args[0]]}{said}"
