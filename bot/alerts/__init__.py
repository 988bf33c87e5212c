"""Alerts: the pure state machine (`machine`, `model`, `rules`), its `store`, the `lease`, Slack
`delivery`, `render`, and the use-case (`desk`).

Imports `bot.health` (snapshots), `bot.rules`, the gateways and the core; no other feature.
"""
