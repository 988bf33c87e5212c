"""The names of the bot's state ConfigMaps in `state.namespace`, all starting with
`state.configmap` and labelled as ours. Pure.

Each cluster's alert state is `<state.configmap>-<cluster>` (a cluster name is a DNS label, so
the name is one too); the fleet incidents' document, keyed `_fleet`, is `<state.configmap>--fleet`,
which no cluster can make (no label starts with `-`); the replay memory, the change journal and
the approvals have `-once`, `-changes`, `-approvals` (`bot.config.model.STATE_SUFFIXES`, names
a cluster may not take). The release before the shards kept every cluster's alert state in
`<state.configmap>` itself: the legacy document, mirrored while it exists (`bot.alerts`
`store_configmap`).
"""

from __future__ import annotations

from bot.config.model import STATE_SUFFIXES

OWNED_LABEL = "app.kubernetes.io/managed-by=kai-chatops"  # `bot.kube.kinds.owned_config_map`


def document_name(configmap: str, key: str) -> str:
    """The alert state ConfigMap of cluster `key` (`_fleet`: the fleet incidents')."""
    return f"{configmap}-{key.replace('_', '-')}"


def own_name(configmap: str, suffix: str) -> str:
    """`<configmap>-once`, `-changes`, `-approvals`: a store of its own beside the alerts'."""
    assert suffix in STATE_SUFFIXES
    return f"{configmap}-{suffix}"


def alert_documents_selector(configmap: str) -> str:
    """The field selector that leaves out the ConfigMaps that are not alert state (the request
    memory changes at every Slack request: watching it would cost more than it saves)."""
    return ",".join(f"metadata.name!={own_name(configmap, s)}" for s in STATE_SUFFIXES)
