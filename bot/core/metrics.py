"""The service's Prometheus metrics, in a registry of its own (no process-wide globals).

Built once by the composition root and handed to the gateways and handlers that count things.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


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
        self.alert_checks = Counter(
            "kai_chatops_alert_checks",
            "Scheduled alert checks by cluster and outcome (ok, failed).",
            ["cluster", "outcome"],
            registry=self.registry,
        )
        self.alert_check_seconds = Histogram(
            "kai_chatops_alert_check_seconds",
            "Time one scheduled alert check of one cluster took, from start to end.",
            registry=self.registry,
        )
        self.alerts = Gauge(
            "kai_chatops_alerts",
            "Alerts by cluster and state (pending, firing, acknowledged, silenced).",
            ["cluster", "state"],
            registry=self.registry,
        )
        self.slack_sends = Counter(
            "kai_chatops_slack_sends",
            "Slack Web API sends by outcome: ok and error for alert messages (error: still "
            "failing after retries), rate_limited for every 429 answer (waited out, then retried).",
            ["outcome"],
            registry=self.registry,
        )
        self.pagerduty_events = Counter(
            "kai_chatops_pagerduty_events",
            "PagerDuty Events API v2 answers by outcome: accepted (202), refused (400, given "
            "up), retry (429, 5xx, no answer: sent again later).",
            ["action", "outcome"],
            registry=self.registry,
        )
        self.state_budget_reached = Counter(
            "kai_chatops_state_budget_reached",
            "Saves of an alert state document (by cluster, `_fleet` for the fleet incidents) "
            "that reached its byte budget, so that notice threads or closed incidents gave way.",
            ["document"],
            registry=self.registry,
        )
        self.state_largest_document = Gauge(
            "kai_chatops_state_largest_document_bytes",
            "Bytes of the largest alert state document this replica saved (its budget is "
            "800 000 bytes; the API server refuses a ConfigMap over 1 048 576).",
            registry=self.registry,
        )
        self.last_check = Gauge(
            "kai_chatops_last_successful_check_timestamp_seconds",
            "Unix time of the last alert check that could read the cluster, by cluster.",
            ["cluster"],
            registry=self.registry,
        )

        self._add_monitoring_gauges()

    def _add_monitoring_gauges(self) -> None:
        """The gauges the PrometheusRule of deploy/components/monitoring/ alerts on."""
        self.check_interval = Gauge(
            "kai_chatops_alert_check_interval_seconds",
            "`alerts.interval`: how often each cluster is checked.",
            registry=self.registry,
        )
        self.outbox_oldest = Gauge(
            "kai_chatops_outbox_oldest_owed_age_seconds",
            "Seconds since the oldest message a cluster's alert outbox still owes Slack was "
            "first saved (0: nothing owed), as of the last check of that cluster.",
            ["cluster"],
            registry=self.registry,
        )
        self.state_budget = Gauge(
            "kai_chatops_state_budget_bytes",
            "The byte budget of one alert state document.",
            registry=self.registry,
        )
        self.lease_holder = Gauge(
            "kai_chatops_lease_holder",
            "1 while this replica holds the Lease and may run the checks (always 1 without a "
            "Lease: the one replica runs them), else 0.",
            registry=self.registry,
        )
        self.lease_transitions = Gauge(
            "kai_chatops_lease_transitions",
            "The Lease's spec.leaseTransitions as this replica last read or wrote it: how many "
            "times the Lease changed hands.",
            registry=self.registry,
        )

    def follow_lease(self, holds: Callable[[], bool], transitions: Callable[[], int]) -> None:
        """Read the Lease gauges from this replica's side of the Lease at each scrape."""
        self.lease_holder.set_function(lambda: 1.0 if holds() else 0.0)
        self.lease_transitions.set_function(lambda: float(transitions()))

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
