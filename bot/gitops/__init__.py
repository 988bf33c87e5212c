"""Flux reconcile and Argo CD refresh/sync: targets, the pure protocols (`plan`, `argo`), the
use-case (`ops`), `render`, and the subcommands (`commands`).

Imports `bot.rules`, `bot.access`, `bot.commands`, the gateways and the core; no other feature.
"""
