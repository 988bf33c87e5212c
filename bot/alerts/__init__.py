"""Alerts: the pure state machine (`machine`, `model`, `rules`, `verdicts`), its `store`, the
`lease`, Slack `delivery`, `render`, the use-case (`desk`), and the subcommands (`commands`).

Imports `bot.health` (snapshots), `bot.rules`, `bot.commands`, the gateways and the core; no other
feature.
"""
