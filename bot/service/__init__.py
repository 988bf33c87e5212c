"""Wiring: the Bolt app, the server (HTTP or Socket Mode), scheduler jobs, probes, the `Deps`
bundle, logs and drain bookkeeping.

May import everything below it: handlers, features, access, gateways, core.
"""
