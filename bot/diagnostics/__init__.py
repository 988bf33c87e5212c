"""Diagnose a component (`/kai diagnose`, and the evidence under an alert): its pods, restarts,
terminations, Warning events, log tail and endpoints, in a constant number of API requests.

Pure rules (`model`, `subjects`, `pods`, `evidence`, `selectors`, `render`) and one use-case
(`usecase`). Imports `bot.health` (Deployment availability), `bot.rules`, the gateways and the core.
"""
