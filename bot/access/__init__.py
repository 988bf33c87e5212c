"""Who may do what (`policy`), signed one-time confirmations, and the audit record of every change.

Imports the gateways, `bot.config` and `bot.core`; no feature.
"""
