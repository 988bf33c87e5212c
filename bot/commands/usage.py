"""The words users read about the slash command: usage per subcommand and the help listing.

Pure strings; `{command}` in the templates stands for the configured command name (`/kai`).
The grammar is docs/design.md §1.3's; `bot.commands.grammar` parses exactly what these texts promise.
"""

from __future__ import annotations

USAGE: dict[str, str] = {
    "help": "{command} help [COMMAND]",
    "health": "{command} health [--cluster NAME]",
    "scaledjobs": "{command} scaledjobs [NAMESPACE | --all-namespaces] [--cluster NAME]",
    "pause": (
        "{command} pause NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "{command} pause scaledobject NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "  e.g. {command} pause annia/annia-worker for 2h node drain\n"
        "  DURATION: 30m, 2h, 1d, 1h30m; without it the pause lasts until resumed\n"
        "  REASON: free text, posted in the channel and recorded on the object"
    ),
    "resume": (
        "{command} resume [scaledobject] NAMESPACE/NAME   (KEDA: a paused ScaledJob or "
        "ScaledObject)\n"
        "{command} resume KIND NAMESPACE/NAME   (Flux: a suspended object, then a reconcile)\n"
        "  KIND: helmrelease|hr, kustomization|ks, gitrepository|gitrepo, "
        "helmrepository|helmrepo,\n"
        "        ocirepository|ocirepo; without a Flux KIND, resume means KEDA"
    ),
    "suspend": (
        "{command} suspend KIND NAMESPACE/NAME [for DURATION] [REASON...]\n"
        "  e.g. {command} suspend hr flux-system/kai-scheduler for 2h hotfix by hand\n"
        "  KIND: helmrelease|hr, kustomization|ks, gitrepository|gitrepo, "
        "helmrepository|helmrepo,\n"
        "        ocirepository|ocirepo (Flux stops reconciling it: spec.suspend: true)\n"
        "  DURATION: 30m, 2h, 1d, 1h30m; then it resumes by itself (and reconciles)\n"
        "  REASON: free text, posted in the channel and recorded on the object"
    ),
    "reconcile": (
        "{command} reconcile KIND NAMESPACE/NAME [--with-source] [--hard]\n"
        "{command} reconcile helmrelease|hr NAMESPACE/NAME --force|--reset\n"
        "{command} reconcile kai|keda [--with-source] [--hard]\n"
        "  KIND: helmrelease|hr, kustomization|ks, gitrepository|gitrepo, "
        "helmrepository|helmrepo,\n"
        "        ocirepository|ocirepo, application|app (Argo CD refresh)\n"
        "  kai|keda: the GitOps object that deploys KAI Scheduler or KEDA\n"
        "  --with-source: helmrelease and kustomization only, reconciles the source first\n"
        "  --hard: application only, an Argo CD hard refresh\n"
        "  --force / --reset: helmrelease only, a one-off install or upgrade / the failure\n"
        "        counts start over (as flux reconcile hr --force / --reset)"
    ),
    "sync": "{command} sync NAMESPACE/NAME   (Argo CD Application sync)",
    "list": (
        "{command} list KIND [NAMESPACE | --all-namespaces]\n"
        "  KIND: helmrelease|hr, kustomization|ks, gitrepository|gitrepo, "
        "helmrepository|helmrepo,\n"
        "        ocirepository|ocirepo, application|app, scaledjob|sj, scaledobject|so\n"
        "  without NAMESPACE: flux-system (Flux), argocd (app), keda.namespaces (sj, so)"
    ),
    "diagnose": (
        "{command} diagnose kai|keda|NAMESPACE/DEPLOYMENT\n"
        "  kai: the KAI operator and every KAI Deployment that is not available\n"
        "  keda: the pods and endpoints behind the external-metrics APIService"
    ),
    "queues": "{command} queues",
    "pending": (
        "{command} pending [NAMESPACE | --all-namespaces]   (without NAMESPACE: every namespace)"
    ),
    "why": "{command} why NAMESPACE/POD",
    "alerts": "{command} alerts",
    "ack": "{command} ack ALERT_ID",
    "silence": (
        "{command} silence ALERT_ID DURATION [REASON...]\n"
        "  ALERT_ID: as {command} alerts and the alert messages show it; DURATION: 30m, 2h, 1d"
    ),
    "unsilence": "{command} unsilence ALERT_ID",
}

# What each subcommand does, and whether it needs an operator (access.operators).
_DESCRIPTIONS: dict[str, tuple[str, bool]] = {
    "help": ("show this help, or how to use one command", False),
    "health": ("KAI Scheduler and external-metrics (KEDA) health of a cluster", False),
    "scaledjobs": ("list KEDA ScaledJobs with their health and whether they are paused", False),
    "alerts": (
        "list the alerts that are firing, acknowledged or silenced (a critical one pages "
        "alerts.mention; each alert's thread starts with its diagnosis)",
        False,
    ),
    "list": ("list Flux objects, Argo CD Applications or KEDA objects with verdicts", False),
    "diagnose": (
        "pods, restarts, last termination, Warning events and log tail (also the first reply "
        "in each alert's thread)",
        False,
    ),
    "queues": ("KAI queues: tree, GPU quota and limit, allocated and requested", False),
    "pending": ("KAI PodGroups that cannot be scheduled, with the scheduler's reasons", False),
    "why": ("why one pod is not running: its PodGroup, queue, reasons and binds", False),
    "pause": (
        "pause a KEDA ScaledJob (or ScaledObject), optionally for a time; asks to confirm",
        True,
    ),
    "resume": (
        "resume a paused ScaledJob or ScaledObject, or with a Flux KIND a suspended Flux "
        "object; asks to confirm",
        True,
    ),
    "suspend": (
        "suspend a Flux object (Flux stops reconciling it), optionally for a time; asks to confirm",
        True,
    ),
    "reconcile": ("make Flux reconcile an object now, or Argo CD refresh an Application", True),
    "sync": ("sync an Argo CD Application; asks to confirm", True),
    "ack": ("acknowledge an alert: you are on it, reminders stop, it does not escalate", True),
    "silence": (
        "silence an alert for a while: no reminders, and no escalation if it falls due meanwhile",
        True,
    ),
    "unsilence": ("end an alert's silence", True),
}
_VIEWERS = "For everyone allowed to view (access.viewers)"
_OPERATORS = "For operators only (access.operators)"
_CLUSTER_NOTE = (
    "Every command takes --cluster NAME; without it the first configured cluster is used."
)


def usage_for(sub: str | None, command_name: str = "/kai") -> str:
    """The usage lines of subcommand `sub`, or of every subcommand for None or an unknown one."""
    if sub in USAGE:
        return USAGE[sub].format(command=command_name)
    lines = [USAGE[name].format(command=command_name) for name in USAGE]
    return "\n".join([*lines, _CLUSTER_NOTE])


def help_text(command_name: str = "/kai", topic: str | None = None) -> str:
    """What `help` shows: every command with a one-line description, grouped by who may run it.

    With a known `topic`, that subcommand's description and usage instead.
    """
    if topic in _DESCRIPTIONS:
        description, needs_operator = _DESCRIPTIONS[topic]
        who = _OPERATORS if needs_operator else _VIEWERS
        return f"{command_name} {topic}: {description}. {who}.\n{usage_for(topic, command_name)}"
    sections = []
    for needs_operator, title in ((False, _VIEWERS), (True, _OPERATORS)):
        lines = [
            f"  {command_name} {name}: {description}"
            for name, (description, operator_only) in _DESCRIPTIONS.items()
            if operator_only is needs_operator
        ]
        sections.append(f"{title}:\n" + "\n".join(lines))
    footer = f"{_CLUSTER_NOTE}\nDetails: {command_name} help COMMAND"
    return "\n".join([*sections, footer])
