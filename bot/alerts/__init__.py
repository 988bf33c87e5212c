"""Alerts: the pure state machine (`machine`, `model`, `rules`, `verdicts`), its `store`, the
`lease`, the `drain` and Slack `delivery`, `render` (`render_replies`, `render_evidence`,
`render_reminders`), the use-case (`usecase.AlertDesk`, a `usecase_<concern>` module per
concern), and the subcommands (`commands`).

Imports `bot.health` (snapshots), `bot.diagnostics` and `bot.workloads` (an incident's
diagnosis), `bot.rules`, `bot.access` (the audit record, the silence policy), `bot.commands`,
the gateways and the core; no other feature.
"""
