"""Strategic merge patch on the built-in kinds the simulator serves, as kube-apiserver applies it.

Pure. Like a merge patch, except that lists with a patch merge key in the Go types (k8s.io/api
`patchMergeKey` / `patchStrategy` struct tags: a pod template's `containers` by `name`, their
`env` by `name`, `ports` by `containerPort`, `conditions` by `type`, ...) are merged element by
element, and `metadata.finalizers` as a set; every other list is replaced whole. Directives:
`$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
`$setElementOrder/<field>` (an ordering hint, applied as given). Algorithm: k8s.io/apimachinery
pkg/util/strategicpatch/patch.go `mergeMap` / `mergeSlice`. Custom resources never get here: the
server refuses this patch type for them (415), as kube-apiserver does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from testbed.sim.status import ApiError

Path = tuple[str, ...]
_POD = ("spec", "template", "spec")
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_CONTAINER_KEYS = {
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}


def _pod_template_keys() -> dict[Path, str]:
    keys: dict[Path, str] = {
        (*_POD, "volumes"): "name",
        (*_POD, "imagePullSecrets"): "name",
        (*_POD, "hostAliases"): "ip",
        (*_POD, "topologySpreadConstraints"): "topologyKey",
    }
    for containers in _CONTAINER_LISTS:
        keys[(*_POD, containers)] = "name"
        for field, key in _CONTAINER_KEYS.items():
            keys[(*_POD, containers, "*", field)] = key
    return keys


_COMMON: dict[Path, str] = {("metadata", "ownerReferences"): "uid"}
_STATUS_CONDITIONS: dict[Path, str] = {("status", "conditions"): "type"}
# (apiVersion, kind) -> list path -> patch merge key
MERGE_KEYS: dict[tuple[str, str], dict[Path, str]] = {
    ("apps/v1", "Deployment"): {**_pod_template_keys(), **_STATUS_CONDITIONS},
    ("v1", "Service"): {("spec", "ports"): "port", **_STATUS_CONDITIONS},
    ("v1", "Namespace"): dict(_STATUS_CONDITIONS),
    ("apiregistration.k8s.io/v1", "APIService"): dict(_STATUS_CONDITIONS),
}
# Lists of scalars merged as sets (patchStrategy:"merge" without a key).
MERGED_SETS: frozenset[Path] = frozenset({("metadata", "finalizers")})
_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_ORDER = "$setElementOrder/"


def strategic_merge(obj: Mapping[str, Any], patch: Any) -> dict[str, Any]:
    """The object after a strategic merge patch.

    Raises:
        ApiError: 400 for a patch that is not an object or an unknown `$patch` directive.
    """
    if not isinstance(patch, dict):
        raise ApiError(400, "a strategic merge patch must be a JSON object")
    keys = {**_COMMON, **MERGE_KEYS.get((str(obj.get("apiVersion")), str(obj.get("kind"))), {})}
    return _merge_map(dict(obj), patch, (), keys)


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], path: Path, keys: dict[Path, str]
) -> dict[str, Any]:
    directive = patch.get(_DIRECTIVE)
    body = {k: v for k, v in patch.items() if k != _DIRECTIVE}
    if directive == "replace":
        return copy.deepcopy({k: v for k, v in body.items() if not k.startswith("$")})
    if directive not in (None, "merge"):
        raise ApiError(400, f"Unknown patch type: {directive!r}")
    result = copy.deepcopy(original)
    retained = body.pop(_RETAIN, None)
    for key, value in body.items():
        if key.startswith(_ORDER):
            continue  # an ordering hint for the merged list: the merge keeps patch order anyway
        if key.startswith(_DELETE_FROM):
            field = key.removeprefix(_DELETE_FROM)
            drop = value if isinstance(value, list) else []
            result[field] = [item for item in result.get(field) or [] if item not in drop]
            continue
        result = _merge_field(result, key, value, (*path, key), keys)
    if isinstance(retained, list):
        result = {k: v for k, v in result.items() if k in retained}
    return result


def _merge_field(
    result: dict[str, Any], key: str, value: Any, path: Path, keys: dict[Path, str]
) -> dict[str, Any]:
    if value is None or (isinstance(value, dict) and value.get(_DIRECTIVE) == "delete"):
        result.pop(key, None)
    elif isinstance(value, dict):
        current = result.get(key)
        result[key] = _merge_map(current if isinstance(current, dict) else {}, value, path, keys)
    elif isinstance(value, list):
        result[key] = _merge_list(result.get(key), value, path, keys)
    else:
        result[key] = copy.deepcopy(value)
    return result


def _merge_list(original: Any, patch: list[Any], path: Path, keys: dict[Path, str]) -> list[Any]:
    current = original if isinstance(original, list) else []
    shape = tuple("*" if part.isdigit() else part for part in path)
    if any(isinstance(item, dict) and item.get(_DIRECTIVE) == "replace" for item in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and _DIRECTIVE in i)]
    if shape in MERGED_SETS:
        return [*current, *(copy.deepcopy(item) for item in patch if item not in current)]
    merge_key = keys.get(shape)
    if merge_key is None:
        return copy.deepcopy(patch)  # no patch strategy: the list is atomic
    merged = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise ApiError(400, f"map: {item!r} does not contain declared merge key: {merge_key}")
        index = next(
            (
                i
                for i, e in enumerate(merged)
                if isinstance(e, dict) and e.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get(_DIRECTIVE) == "delete":
            merged = [e for j, e in enumerate(merged) if j != index]
        elif index is None:
            merged.append(_merge_map({}, item, (*path, str(len(merged))), keys))
        else:
            merged[index] = _merge_map(merged[index], item, (*path, str(index)), keys)
    return merged
