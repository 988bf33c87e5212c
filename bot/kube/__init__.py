"""The Kubernetes gateway (the only importer of `kubernetes`), its errors, the ports every
use-case takes, the resource kinds and manifest reading.

Imports `bot.config` and `bot.core`.
"""
