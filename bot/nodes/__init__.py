"""GPU nodes: pure rules (`gpus`), cordon plans (`cordon`), the use-cases (`usecase`, `expiry`),
the change kinds for `bot.changes` (`change`), their words (`render`, `render_cordon`) and the
subcommands (`commands`).

Imports `bot.access`, `bot.changes.kinds`, `bot.commands`, the gateways and the core; no other
feature (the GPU node alert in `bot.alerts` reads these rules).
"""
