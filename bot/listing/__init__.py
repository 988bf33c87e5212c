"""`/kai list KIND` (docs/design.md §2 "List") and the "did you mean" for objects that do not exist:
verdicts of Flux objects, Argo CD Applications and KEDA objects, worst first, within Slack's
limits; objects of a name in other kinds or namespaces; the subcommand (`commands`). The caller
passes the resource types, so this package imports only `bot.rules`, `bot.commands`, the gateways,
the Slack helpers and the core.
"""
