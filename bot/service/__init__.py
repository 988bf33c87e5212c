"""Wiring: the Bolt app, the server (HTTP or Socket Mode), the scheduler (`schedule`) and its
jobs (`jobs_*`), probes, the `Deps` bundle, logs and drain bookkeeping.

May import everything below it: handlers, features, access, gateways, core (the jobs: all but
handlers).
"""
