"""The Slack gateway (Web API calls), Slack's limits, and the Block Kit helpers every message
is built with.

Imports `bot.core`; the gateway is the only module here that does I/O.
"""
