"""Integrations with the monitoring stack users already run: Alertmanager's webhook and
silences (docs/alertmanager.md), PagerDuty's Events API (`bot.integrations.pagerduty`,
docs/pagerduty.md): adapters into the alert lifecycle and its outbox (`bot.alerts`).
May import the features and the layers under them; never `bot.service` or `handlers`."""
