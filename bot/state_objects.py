"""The Kubernetes objects the bot keeps its own state in: a Lease and a ConfigMap.

Pure: types only. The Lease and the ConfigMap store reach them through `bot.kube_ports.KubeWriter`.
"""

from __future__ import annotations

from bot.kinds import ResourceRef

LEASE = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
CONFIG_MAP = ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)
