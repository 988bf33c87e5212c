"""The Slack gateway (Web API calls), Slack's limits, and the Block Kit helpers every message
is built with.

Imports `bot.core`; the gateway (Web API calls) and `responses` (response_url posts) are the
only modules here that do I/O.
"""
