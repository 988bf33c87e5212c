"""The Kubernetes gateway (the only importer of `kubernetes`: request/response calls on the
client's threads, every watch on aiohttp streams), its errors, the ports every use-case takes,
the resource kinds and manifest reading; the one list-then-watch route and the watched copies
read through it; following one object after a change.

Imports `bot.config` and `bot.core`.
"""
