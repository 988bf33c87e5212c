"""KAI health: the live check (`usecase`), the pure report (`report`, `deployments`), how
it looks (`render`), and `/kai health` (`commands`).

Imports `bot.rules`, `bot.commands`, the gateways, `bot.config` and `bot.core`; no other feature.
"""
