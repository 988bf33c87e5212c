"""The notice that a state document reached its byte budget and what gave way. Pure."""

from __future__ import annotations

from bot.slack.blocks import escape


def budget_notice(document: str, budget: int, threads: int, closed: int) -> str:
    """`:warning:` once a document shed what it could keep no longer; alerting goes on."""
    where = "the fleet incidents" if document == "_fleet" else f"cluster {escape(document)}"
    shed = []
    if threads:
        shed.append(f"the {threads} oldest eviction notice thread{'s' * (threads != 1)}")
    if closed:
        shed.append(f"the {closed} oldest closed incident{'s' * (closed != 1)}")
    gave_way = " and ".join(shed) or "nothing it could spare"
    return (
        f":warning: kai-chatops's alert state for {where} reached its budget of {budget:,} bytes, "
        f"so it no longer keeps {gave_way} (their threads are no longer updated). Alerting goes "
        "on: what an open incident still owes Slack is always kept."
    )
