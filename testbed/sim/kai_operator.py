"""The KAI operator's status pass over a store: `kai-config` and every SchedulingShard get the
conditions their release writes (`testbed.sim.kai_status`) from the operand workloads there.

Runs on the simulator's store or a real API server (`testbed.apicontrollers --kai-release`):
`testbed.sim.controllers` runs a pass at every change of what it follows (`FOLLOWED`), and the
scenario actions run one after they change an operand (`testbed.sim.kai_actions`).
"""

from __future__ import annotations

from typing import Any

from testbed.sim import kai_status
from testbed.sim import status as st
from testbed.sim.controller_base import ControlledStore
from testbed.sim.kai_releases import KaiRelease
from testbed.sim.resources import ResourceType

CONFIG = ("kai.scheduler", "v1", "configs")
SHARD = ("kai.scheduler", "v1", "schedulingshards")
DEPLOYMENT = ("apps", "v1", "deployments")
DAEMONSET = ("apps", "v1", "daemonsets")
FOLLOWED = (CONFIG, SHARD, DEPLOYMENT, DAEMONSET)
KAI_CONFIG = "kai-config"


def reconcile(store: ControlledStore, kai: KaiRelease) -> set[str]:
    """One pass of `kai`'s operator: kai-config's conditions, then each shard's; the
    resourceVersions its status writes gave (a follower need not answer its own writes)."""
    configs, shards = store.find_type(*CONFIG), store.find_type(*SHARD)
    if configs is None or shards is None:
        return set()  # KAI's CRDs are not served: nothing to reconcile
    config = _get(store, configs, KAI_CONFIG)
    shard_list = store.items(shards, None)
    namespace = ((config or {}).get("spec") or {}).get("namespace") or "kai-scheduler"
    workloads = _workloads(store, namespace)
    written = set()
    if config is not None:
        wanted = kai_status.config_operands(kai, config, shard_list)
        missing = _missing_dependencies(store, config)
        written |= _write(store, configs, config, kai, wanted, workloads, missing)
    for shard in shard_list:
        wanted = kai_status.shard_operands(config, shard)
        written |= _write(store, shards, shard, kai, wanted, workloads, "")
    return written


def _write(
    store: ControlledStore,
    rtype: ResourceType,
    obj: dict[str, Any],
    kai: KaiRelease,
    wanted: list[kai_status.Operand],
    workloads: kai_status.Workloads,
    missing: str,
) -> set[str]:
    """The start of the pass, then its end, each one status patch when it changes anything."""
    now = store.clock()
    end = kai_status.computed(kai, obj, wanted, workloads, missing)
    old = list((obj.get("status") or {}).get("conditions") or [])
    first = kai_status.merged(old, [*kai_status.started(kai, obj), end[0]], now)
    last = kai_status.merged(first, end, now)
    written = set()
    for before, after in ((old, first), (first, last)):
        if after != before:
            body = {"status": {"conditions": after}}
            name = obj["metadata"]["name"]
            stored = store.patch(rtype, None, name, "merge", body, mode="status")
            written.add(str(stored["metadata"]["resourceVersion"]))
    return written


def _workloads(store: ControlledStore, namespace: str) -> kai_status.Workloads:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, key in (("Deployment", DEPLOYMENT), ("DaemonSet", DAEMONSET)):
        rtype = store.find_type(*key)
        for workload in store.items(rtype, namespace) if rtype is not None else []:
            found[(kind, workload["metadata"]["name"])] = workload
    return found


def _missing_dependencies(store: ControlledStore, config: dict[str, Any]) -> str:
    """The Prometheus operand's one check (operands/prometheus/prometheus.go): enabled without
    an external URL, it needs the Prometheus Operator's CRD."""
    prometheus = (config.get("spec") or {}).get("prometheus") or {}
    if not prometheus.get("enabled") or prometheus.get("externalPrometheusUrl"):
        return ""
    served = store.find_type(*kai_status.PROMETHEUS_CRD) is not None
    return "" if served else kai_status.MISSING_PROMETHEUS


def _get(store: ControlledStore, rtype: ResourceType, name: str) -> dict[str, Any] | None:
    try:
        return store.get(rtype, None, name)
    except st.ApiError as exc:
        if exc.code == 404:
            return None
        raise
