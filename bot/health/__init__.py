"""KAI health: the live check (`usecase`), the pure report (`report`, `deployments`), and how
it looks (`render`).

Imports `bot.rules`, the gateways, `bot.config` and `bot.core`; no other feature.
"""
