"""The three outcomes an action's audit line can have (docs/design.md §2 "Safety").

Pure, so the pure plans (`bot.gitops.target`, `bot.keda.pause`) name the same words the audit
record (`bot.access.audit`) keeps.
"""

from __future__ import annotations

from typing import Literal

# `unknown`: the write got no answer, or its result could not be read back.
AuditOutcome = Literal["ok", "failed", "unknown"]
