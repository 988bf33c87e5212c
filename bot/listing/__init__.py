"""`/kai list KIND` (docs/design.md §2 "List") and the "did you mean" for objects that do not exist:
verdicts of Flux objects, Argo CD Applications and KEDA objects, worst first, within Slack's
limits; objects of a name in other kinds or namespaces; where each kind lives and the command a
suggestion offers (`places`); the subcommand (`commands`). It reads the Flux, Argo CD and KEDA
kinds and says held objects in their words, so it sits above `bot.gitops` and `bot.keda`.
"""
