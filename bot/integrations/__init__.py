"""Adapters between the alert lifecycle and the tools beside it (docs/design.md §3): PagerDuty's
Events API (`bot.integrations.pagerduty`)."""
