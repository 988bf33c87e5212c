"""Diagnose a component (`/kai diagnose`, and the evidence under an alert): its pods, restarts,
terminations, Warning events, log tail and endpoints, in a constant number of API requests.

Pure rules (`model`, `subjects`, `pods`, `evidence`, `selectors`, `cause`, `render`), one use-case
(`usecase`) and the subcommand (`commands`). Imports `bot.health` (Deployment availability),
`bot.rules`, `bot.commands`, the gateways and the core.
"""
