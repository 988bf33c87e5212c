"""KAI workloads: `/kai queues`, `/kai pending`, `/kai why` (docs/design.md §2 "KAI workloads").

Pure rules (`quantities`, `queues`, `pending`, `reasons`, `why`, `render`) over Queues, PodGroups'
`status.schedulingConditions[].reasons[]`, BindRequests and events, one use-case (`usecase`) and
the subcommands (`commands`). Imports `bot.commands`, the gateways, the Slack helpers and the core;
no other feature.
"""
