"""KEDA pause and resume: pure plans (`pause`), use-cases (`ops`, `expiry`), their words
(`render`, `render_changes`), and the subcommands (`commands`).

Imports `bot.rules`, `bot.access`, `bot.commands`, the gateways and the core; no other feature.
"""
