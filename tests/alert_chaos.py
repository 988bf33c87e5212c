"""The soak's plan and figures: what each seed runs (`SeedPlan`), its random Slack faults and
writes held on the wire (`Chaos`), and what it counted (`Figures`). Used by `tests/alert_soak.py`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from alert_stack import SLACK_TIMEOUT, Gate

from testbed.slackemu.records import Fault

WRITES = ("chat.postMessage", "chat.update", "chat.delete")
READS = ("conversations.history", "conversations.replies")


@dataclass(frozen=True)
class SeedPlan:
    """What a seed runs besides the random faults: even seeds two replicas (Lease 15 s), odd
    ones one (Lease 1 h); every third the ConfigMap backend with write faults; seeds 1, 6, 11,
    16 Slack's clock 3 h behind, 2, 7, 12, 17 3 h ahead; every fourth, from 3, busy channels;
    every eighth, from 2, three clusters whose failure is one fleet incident."""

    seed: int

    @property
    def replicas(self) -> int:
        return 2 if self.seed % 2 == 0 else 1

    @property
    def configmap(self) -> bool:
        return self.seed % 3 == 0

    @property
    def slack_clock(self) -> timedelta:
        return timedelta(hours={1: -3, 2: 3}.get(self.seed % 5, 0))

    @property
    def busy(self) -> bool:
        return self.seed % 4 == 3

    @property
    def fleet(self) -> tuple[str, ...]:
        """Seeds 2, 10, 18: three clusters (one simulated cluster under three names, so they
        break together) and `alerts.group_clusters: 3`: each page is one fleet incident."""
        return ("sim", "b", "c") if self.seed % 8 == 2 else ()

    def describe(self) -> str:
        parts = [f"{self.replicas} replica(s)", "configmap" if self.configmap else "sqlite"]
        if self.slack_clock:
            parts.append(f"slack clock {self.slack_clock.total_seconds() / 3600:+.0f}h")
        if self.busy:
            parts.append("busy channel")
        if self.fleet:
            parts.append(f"{len(self.fleet)} clusters grouped")
        return ", ".join(parts)


@dataclass
class Figures:
    """What one soak did and found."""

    seeds: list[int] = field(default_factory=list)
    incidents: int = 0
    diagnoses: int = 0
    escalations: int = 0
    evictions: int = 0  # Evict Events recorded (each owes one notice, some a reply)
    notices: int = 0  # eviction notices and replies found in their channel
    faults: Counter[str] = field(default_factory=Counter)
    seen_twice: int = 0
    late_pages: int = 0  # pages later than the first check after `hold`, no post of theirs faulted
    lies: int = 0
    shown_late: int = 0  # late edits seen showing a lie, repaired within a step (the honest limit)
    strays: int = 0
    lost: int = 0
    duplicated: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        self.seeds += other.seeds
        self.incidents += other.incidents
        self.diagnoses += other.diagnoses
        self.escalations += other.escalations
        self.evictions += other.evictions
        self.notices += other.notices
        self.faults.update(other.faults)
        self.seen_twice += other.seen_twice
        self.late_pages += other.late_pages
        self.lies += other.lies
        self.shown_late += other.shown_late
        self.strays += other.strays
        self.lost += other.lost
        self.duplicated += other.duplicated
        self.problems += other.problems

    @property
    def failed(self) -> bool:
        found = (self.seen_twice, self.lies, self.strays, self.lost, self.duplicated)
        return any(found) or bool(self.problems)

    def summary(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
        seeds = f"{self.seeds[0]}-{self.seeds[-1]}" if len(self.seeds) > 1 else str(self.seeds)
        return (
            f"seeds {seeds} ({len(self.seeds)}): incidents {self.incidents} (diagnoses "
            f"{self.diagnoses}, escalations {self.escalations}), evictions {self.evictions} "
            f"(notices and replies {self.notices}), faults injected "
            f"{sum(self.faults.values())} ({faults}); late landings shown for a step "
            f"{self.shown_late}; pages seen twice {self.seen_twice}, late pages "
            f"{self.late_pages}, "
            f"lies {self.lies}, non-holder posts left standing {self.strays}, "
            f"lost {self.lost}, duplicated {self.duplicated}"
        )


class Chaos:
    """The random fault schedule of one seed: the emulator's fault rule, and which writes are
    held on the wire past the client's timeout (`holds`, an emulator `Hold` match)."""

    def __init__(self, rng: random.Random, figures: Figures) -> None:
        self.rng = rng
        self.figures = figures
        self.on = True
        self.kill_gate: Gate | None = None  # armed: hold the next post on the wire
        self.history_down = False  # conversations.history fails (a busy channel's outage)

    def __call__(self, method: str) -> Fault | None:
        if method == "chat.postMessage" and self.kill_gate is not None:
            gate, self.kill_gate = self.kill_gate, None
            self.figures.faults["kill mid-post"] += 1
            return Fault(200, 0, "", "delay_before", gate=gate)
        if self.history_down and method == "conversations.history":
            return Fault(503, 0, "service_unavailable")
        if not self.on or method not in WRITES + READS or self.rng.random() > 0.25:
            return None
        kind = self.rng.choices(
            ["429", "5xx", "5xx after", "drop before", "drop after", "late answer"],
            weights=[3, 3, 2, 2, 3, 1],
        )[0]
        self.figures.faults[kind] += 1
        return {
            "429": Fault(429, 0, "ratelimited"),
            "5xx": Fault(503, 0, "service_unavailable"),
            "5xx after": Fault(503, 0, "service_unavailable", "applied_error"),
            "drop before": Fault(200, 0, "", "drop_before"),
            "drop after": Fault(200, 0, "", "drop_after"),
            "late answer": Fault(200, 0, "", "delay_after", SLACK_TIMEOUT * 1.5),
        }[kind]

    def holds(self, method: str, params: Mapping[str, Any]) -> bool:
        """Whether Slack sits on this write until the soak releases it (a later step)."""
        if not self.on or method not in WRITES or self.rng.random() > 0.03:
            return False
        self.figures.faults["held past the timeout"] += 1
        return True
