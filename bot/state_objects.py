"""The Kubernetes objects the bot keeps its own state in (a Lease, a ConfigMap), and the calls.

`ObjectStore` is the narrow slice of `bot.kube.KubeGateway` that the Lease and the ConfigMap
store use, so their tests may fake it. Pure: types only.
"""

from __future__ import annotations

from bot.kinds import ResourceRef
from bot.kube_ports import KubeWriter

LEASE = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
CONFIG_MAP = ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)


ObjectStore = KubeWriter  # read, create and merge-patch one object
