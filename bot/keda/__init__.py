"""KEDA pause and resume: pure plans (`pause`), use-cases (`ops`, `expiry`), and their words
(`render`, `render_changes`).

Imports `bot.rules`, `bot.access`, the gateways and the core; no other feature.
"""
