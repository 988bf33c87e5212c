"""Flux reconcile, suspend and resume, Argo CD refresh and sync: targets, the pure protocols
(`plan`, `argo`, `suspend`, `windows`), the use-cases (`usecase`, `usecase_suspend`, the
timed-suspend sweep `suspend_expiry`), their change kinds for `bot.changes` (`change`,
`change_suspend`), the words (`render`, `render_suspend`), and the subcommands (`commands`).

Imports `bot.rules`, `bot.access`, `bot.changes.kinds`, `bot.commands`, the gateways and the
core; no other feature.
"""
