"""Notices: KAI's evictions told in the evicted group's namespace channel, once per Event.
Imports the alert outbox and store (delivery), the workloads' queue numbers, the gateways."""
