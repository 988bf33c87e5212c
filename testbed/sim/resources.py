"""Resource types the simulated API serves: the built-ins, those CRD objects define, and discovery.

Pure: a `ResourceType` describes one group/version/plural; discovery documents (`/api`, `/apis`,
`/apis/{group}/{version}`) are built from a list of them. No storage and no HTTP here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from testbed.sim.status import ApiError

VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}


@dataclass(frozen=True)
class ResourceType:
    """One served group/version/plural and what the server knows about it."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = False
    categories: tuple[str, ...] = ()
    printer_columns: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    custom: bool = False  # served from a CRD: the custom-resource handler's rules apply
    has_generation: bool = True  # ConfigMap, Lease, ...: the API server sets no generation
    selectable_fields: tuple[str, ...] = ()  # a CRD version's selectableFields, as field paths
    # Nodes keep the status they are created with (k8s.io/kubernetes pkg/registry/core/node
    # strategy.go `PrepareForCreate`: "Nodes allow *all* fields, including status, to be set").
    status_on_create: bool = False

    @property
    def api_version(self) -> str:
        """`kai.scheduler/v1`, or `v1` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_key(self) -> tuple[str, str]:
        """Objects are stored once per group and plural, whatever version they are read at."""
        return (self.group, self.plural)

    def is_named(self, name: str) -> bool:
        """Whether `name` is this type's plural, singular, kind or a short name (any case)."""
        lowered = name.lower()
        names = {self.plural, self.singular, self.kind.lower(), *self.short_names}
        return lowered in names


def _builtin(
    api_version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool,
    short: tuple[str, ...] = (),
    status: bool = False,
    generation: bool = True,
    status_on_create: bool = False,
) -> ResourceType:
    group, _, version = api_version.rpartition("/")
    return ResourceType(
        group,
        version,
        plural,
        kind.lower(),
        kind,
        namespaced,
        short,
        status,
        has_generation=generation,
        status_on_create=status_on_create,
    )


BUILTINS: tuple[ResourceType, ...] = (
    _builtin("v1", "namespaces", "Namespace", namespaced=False, short=("ns",), status=True),
    # ConfigMaps, Events and Leases carry no metadata.generation: their registry strategies
    # never set it (k8s.io/kubernetes pkg/registry/core/configmap/strategy.go and peers).
    _builtin("v1", "configmaps", "ConfigMap", namespaced=True, short=("cm",), generation=False),
    _builtin("v1", "services", "Service", namespaced=True, short=("svc",), status=True),
    _builtin("v1", "events", "Event", namespaced=True, short=("ev",), generation=False),
    _builtin(
        "apps/v1", "deployments", "Deployment", namespaced=True, short=("deploy",), status=True
    ),
    _builtin(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        short=("crd", "crds"),
        status=True,
    ),
    _builtin(
        "apiregistration.k8s.io/v1", "apiservices", "APIService", namespaced=False, status=True
    ),
    _builtin("coordination.k8s.io/v1", "leases", "Lease", namespaced=True, generation=False),
    # What `/kai diagnose` reads: pods (and their logs), ReplicaSets, EndpointSlices.
    _builtin("v1", "pods", "Pod", namespaced=True, short=("po",), status=True),
    _builtin("apps/v1", "replicasets", "ReplicaSet", namespaced=True, short=("rs",), status=True),
    # KAI v0.16's NUMA placement exporter, an operand that is a DaemonSet (`/kai health`).
    _builtin("apps/v1", "daemonsets", "DaemonSet", namespaced=True, short=("ds",), status=True),
    _builtin("discovery.k8s.io/v1", "endpointslices", "EndpointSlice", namespaced=True),
    # GPU nodes (`/kai nodes`, cordon): no generation (the node strategy sets none), and a
    # status that may be written at create, as a kubelet registers its node.
    _builtin(
        "v1",
        "nodes",
        "Node",
        namespaced=False,
        short=("no",),
        status=True,
        generation=False,
        status_on_create=True,
    ),
    # A DaemonSet's revisions (`/kai timeline`'s rollouts); no generation: its registry
    # strategy sets none (k8s.io/kubernetes pkg/registry/apps/controllerrevision/strategy.go).
    _builtin(
        "apps/v1", "controllerrevisions", "ControllerRevision", namespaced=True, generation=False
    ),
)
CRD_TYPE = BUILTINS[5]
POD_LOG = "log"  # the pods/log subresource (GET only), answered by `testbed.sim.podlogs`


def types_from_crd(crd: Mapping[str, Any]) -> list[ResourceType]:
    """The resource types a CustomResourceDefinition serves, one per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kind, plural = str(names.get("kind", "")), str(names.get("plural", ""))
    if not (kind and plural and spec.get("group")):
        return []
    return [
        ResourceType(
            group=str(spec["group"]),
            version=str(version["name"]),
            plural=plural,
            singular=str(names.get("singular") or kind.lower()),
            kind=kind,
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            short_names=tuple(names.get("shortNames") or ()),
            has_status="status" in (version.get("subresources") or {}),
            categories=tuple(names.get("categories") or ()),
            printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            custom=True,
            selectable_fields=_selectable_fields(version),
        )
        for version in spec.get("versions") or ()
        if version.get("served", True)
    ]


def _selectable_fields(version: Mapping[str, Any]) -> tuple[str, ...]:
    """`selectableFields[].jsonPath` (`.spec.color`) as field-selector paths (`spec.color`)."""
    paths = (str(entry.get("jsonPath", "")) for entry in version.get("selectableFields") or ())
    return tuple(path.lstrip(".") for path in paths if path)


def crd_status(crd: Mapping[str, Any]) -> dict[str, Any]:
    """The status a real API server gives an accepted CRD (names accepted, established)."""
    spec = crd.get("spec") or {}
    stored = [v["name"] for v in spec.get("versions") or () if v.get("storage")]
    conditions = [
        {"type": kind, "status": "True", "reason": reason, "message": message}
        for kind, reason, message in (
            ("NamesAccepted", "NoConflicts", "no conflicts found"),
            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        )
    ]
    return {
        "acceptedNames": dict(spec.get("names") or {}),
        "storedVersions": stored,
        "conditions": conditions,
    }


def is_pod(rtype: ResourceType) -> bool:
    """Whether `rtype` is the core Pod (the one type with a `log` subresource here)."""
    return (rtype.group, rtype.plural) == ("", "pods")


class TypeRegistry:
    """The served types: the built-ins, then those of the stored CRDs (swapped whole on change)."""

    def __init__(self) -> None:
        self._types: tuple[ResourceType, ...] = BUILTINS

    def all(self) -> list[ResourceType]:
        """Every served type."""
        return list(self._types)

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at exactly this group, version and plural, if any."""
        wanted = (group, version, plural)
        return next((t for t in self._types if (t.group, t.version, t.plural) == wanted), None)

    def resolve(self, api_version: str, name: str) -> ResourceType:
        """The type an apiVersion and a kind, plural, singular or short name designate.

        Raises:
            ApiError: 404 when no served type matches.
        """
        group, _, version = api_version.rpartition("/")
        for rtype in self._types:
            if (rtype.group, rtype.version) == (group, version) and rtype.is_named(name):
                return rtype
        raise ApiError(404, f'no matches for kind "{name}" in version "{api_version}"')

    def refresh(self, crds: Iterable[Mapping[str, Any]]) -> None:
        """Serve exactly the built-ins and what these CRD objects define."""
        self._types = (*BUILTINS, *(t for crd in crds for t in types_from_crd(crd)))


_VERSION = re.compile(r"^v(?P<major>\d+)(?:(?P<stage>alpha|beta)(?P<minor>\d+))?$")


def version_rank(version: str) -> tuple[int, int, int]:
    """Kubernetes version priority as a sort key (bigger first): GA > beta > alpha, then numbers."""
    match = _VERSION.match(version)
    if match is None:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[match["stage"]]
    return (stage, int(match["major"]), int(match["minor"] or 0))


def group_versions(types: Iterable[ResourceType]) -> dict[str, list[str]]:
    """Each group's served versions, preferred first, groups in first-seen order."""
    groups: dict[str, set[str]] = {}
    for rtype in types:
        groups.setdefault(rtype.group, set()).add(rtype.version)
    return {g: sorted(vs, key=version_rank, reverse=True) for g, vs in groups.items()}


def api_versions(server_address: str) -> dict[str, Any]:
    """`GET /api`."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    """`GET /apis/{group}` (also one entry of the group list)."""
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def api_group_list(types: Iterable[ResourceType]) -> dict[str, Any]:
    """`GET /apis`: every non-core group."""
    groups = [api_group(g, vs) for g, vs in group_versions(types).items() if g]
    for entry in groups:
        del entry["kind"], entry["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list(group: str, version: str, types: Iterable[ResourceType]) -> dict[str, Any]:
    """`GET /api/v1` or `/apis/{group}/{version}`, with `x/status` entries."""
    resources: list[dict[str, Any]] = []
    for rtype in types:
        if (rtype.group, rtype.version) != (group, version):
            continue
        entry: dict[str, Any] = {
            "name": rtype.plural,
            "singularName": rtype.singular,
            "namespaced": rtype.namespaced,
            "kind": rtype.kind,
            "verbs": list(VERBS),
        }
        if rtype.short_names:
            entry["shortNames"] = list(rtype.short_names)
        if rtype.categories:
            entry["categories"] = list(rtype.categories)
        resources.append(entry)
        if rtype.has_status:
            status = {
                "name": f"{rtype.plural}/status",
                "singularName": "",
                "verbs": list(STATUS_VERBS),
            }
            resources.append({**status, "namespaced": rtype.namespaced, "kind": rtype.kind})
        if is_pod(rtype):
            log = {"name": f"pods/{POD_LOG}", "singularName": "", "verbs": ["get"]}
            resources.append({**log, "namespaced": True, "kind": "Pod"})
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
