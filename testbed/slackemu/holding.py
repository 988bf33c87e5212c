"""Calls held on the wire: Slack has them but carries them out only when the test says so.

A held call is applied and answered on `release()`, even if the client gave up (timed out and
hung up) long before: the request handler is not cancelled by the disconnect. No HTTP here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CallMatch = Callable[[str, Mapping[str, Any]], bool]  # (method, params) -> hold it?


@dataclass
class Hold:
    """Every call `match` picks waits until `release()`; `held` counts those that arrived,
    `landed` those carried out since."""

    match: CallMatch
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    held: int = 0
    landed: int = 0

    @property
    def is_holding(self) -> bool:
        """Whether new matching calls are still held (not released yet)."""
        return not self.gate.is_set()

    def release(self) -> None:
        """Let every held call through (Slack carries them out now); hold no more."""
        self.gate.set()

    @property
    def all_landed(self) -> bool:
        """Released, and every call it held was carried out."""
        return not self.is_holding and self.landed >= self.held


def metadata_by(params: Mapping[str, Any]) -> str:
    """Who a call's message metadata names as its poster (`event_payload.by`), or ""."""
    metadata = params.get("metadata")
    payload = metadata.get("event_payload") if isinstance(metadata, Mapping) else None
    return str(payload.get("by") or "") if isinstance(payload, Mapping) else ""
