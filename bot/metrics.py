"""The service's Prometheus metrics, in a registry of its own (no process-wide globals).

Built once by the composition root and handed to the gateways and handlers that count things.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest


class Metrics:
    """Counters and histograms served on `GET /metrics`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.kube_requests = Counter(
            "kai_chatops_kube_requests",
            "Kubernetes API requests by cluster, verb and outcome (ok, retried, error).",
            ["cluster", "verb", "outcome"],
            registry=self.registry,
        )
        self.commands = Counter(
            "kai_chatops_commands",
            "Slash commands handled, by subcommand and outcome (ok, rejected, error).",
            ["subcommand", "outcome"],
            registry=self.registry,
        )
        self.command_seconds = Histogram(
            "kai_chatops_command_seconds",
            "Time from a command's ack to its reply, by subcommand.",
            ["subcommand"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
