"""The slash command's shared grammar (`grammar`: tokens, `--cluster`, NAMESPACE/NAME, durations),
the KIND words several features read (`kinds`), and the table of subcommands with the dispatch,
usage and help read from it (`registry`). Each feature's subcommands live in its own `commands`
module; `bot/subcommands/` registers them. Pure; imports only `bot.core`.
"""
