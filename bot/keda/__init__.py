"""KEDA pause and resume: pure plans (`pause`), use-cases (`usecase`, `expiry`), their change
kinds for `bot.changes` (`change`), their words (`render`, `render_changes`), and the
subcommands (`commands`).

Imports `bot.rules`, `bot.access`, `bot.changes.kinds`, `bot.commands`, the gateways and the
core; no other feature.
"""
