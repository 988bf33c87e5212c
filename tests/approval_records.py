"""The approval tests' configuration, and approval records as large as the service can make
them, to fill the memory of approvals (`bot.access.approval_store`) to its limit; written once.

`approval_config` has two clusters on one simulator: `sim` needs approval, `other` does not.
`largest_waiting` is a week-long pause of the longest names a Kubernetes object and a cluster
may have, with the longest reason a Confirm carries, built by the service's own code;
`records_to` fills a number of bytes with them, measured as a ConfigMap's data is.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from bot.access import approvals, confirmations, once, render_approval
from bot.access.approvals import Approval
from bot.changes import params
from bot.keda.change import PauseKind, PauseParams
from bot.keda.pause import KedaTarget
from bot.keda.usecase import AckWait

CHANNEL = "C0DEMO"


def approval_config(kubeconfig: str, approvers: list[str]) -> dict[str, Any]:
    """Operators through `@platform-oncall`; `sim` needs one of `approvers`, `other` nobody."""
    return {
        "clusters": [
            {"name": "sim", "kubeconfig": kubeconfig, "context": "sim"},
            {"name": "other", "kubeconfig": kubeconfig, "context": "sim"},
        ],
        "access": {
            "operators": ["@platform-oncall"],
            "viewers": "everyone",
            "approval": {"clusters": ["sim"], "approvers": approvers},
        },
    }


def largest_waiting(number: int, now: datetime, reason: str = "x" * params.MAX_REASON) -> Approval:
    """The largest request the service can keep: a week-long pause of the longest names, with
    the longest reason a Confirm carries, asked by the service's own code."""
    target = KedaTarget("ScaledJob", "n" * 63, "w" * 253, "c" * 63)
    change = PauseParams(target, reason, timedelta(days=7))
    described = PauseKind(AckWait(timeout=0.3, interval=0.05)).describe(change)
    asked = confirmations.new_pending(
        "pause", params.encode(change), user_id="U0" + "A" * 9, channel_id=CHANNEL, now=now
    )
    return approvals.new_approval(
        asked,
        channel_id=CHANNEL,
        what=described.line,
        lines=render_approval.detail_lines(described.duration, reason),
        now=now,
        change_id=f"{number:08d}",
    )


def records_to(limit: int, now: datetime, first: int = 0) -> dict[str, str]:
    """As many largest records, asked at `now`, as fit in `limit` bytes (IDs from `first`),
    and one with a shorter reason in what room is left, if it fits."""
    data: dict[str, str] = {}
    size = 1  # the compact JSON's `{`, and `}` in place of the last comma
    while True:
        record = largest_waiting(first + len(data), now)
        key, body = f"approval-{record.id}", approvals.to_json(record)
        entry = len(json.dumps(key)) + len(json.dumps(body)) + 2
        if size + entry > limit:
            break
        data[key], size = body, size + entry
    cut = params.MAX_REASON - (size + entry - limit + 1) // 2  # each character is there twice
    if cut >= 0:
        last = largest_waiting(first + len(data), now, reason="x" * cut)
        data[f"approval-{last.id}"] = approvals.to_json(last)
    assert once.stored_bytes(data) <= limit
    return data
