"""How one write turns a stored object and a request body into the next stored object.

Pure: server-owned metadata (uid, creationTimestamp, generation), status-subresource isolation,
the resourceVersion precondition and patch application. Takes `now` as an argument; the store
owns state, locking and resourceVersion numbering.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import secrets
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from testbed.sim import status as st
from testbed.sim.patching import json_patch, merge_patch, merge_patch_document
from testbed.sim.resources import CRD_TYPE, ResourceType, crd_status
from testbed.sim.strategic import strategic_merge

# "main": a write to the resource (status ignored when it has a status subresource);
# "status": a write to `.../status` (only status kept); "seed": direct access, everything kept.
WriteMode = Literal["main", "status", "seed"]
PatchType = Literal["merge", "json", "strategic"]
_NOT_SPEC = ("apiVersion", "kind", "metadata", "status")
_SERVER_OWNED = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
)
# k8s.io/apimachinery pkg/util/validation/validation.go: the name formats and their messages.
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_LABEL_FORMAT = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_FORMAT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
# Kinds named by a DNS-1123 label (k8s.io/kubernetes pkg/apis/core/validation: Namespace,
# Service); Events by any path segment; every other kind here, custom resources included, by a
# DNS-1123 subdomain.
_LABEL_NAMED = (("", "Namespace"), ("", "Service"))
_ANY_NAMED = (("", "Event"),)
# k8s.io/kubernetes pkg/apis/core/types.go `MaxSecretSize`: a ConfigMap's data and binaryData.
MAX_CONFIG_MAP_BYTES = 1024 * 1024


def timestamp(now: datetime) -> str:
    """RFC 3339 in UTC with seconds, as the API server writes times."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_start(obj: Mapping[str, Any], when: datetime) -> dict[str, Any]:
    """The start of an Event about `obj` as client-go's recorders write one: named
    `<object>.<hex nanoseconds>` in its namespace, `involvedObject` naming it whole."""
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta.get('name')}.{int(when.timestamp() * 1e9):x}",
            "namespace": meta.get("namespace"),
        },
        "involvedObject": {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
    }


def render(rtype: ResourceType, obj: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a stored object as read at `rtype`'s version."""
    rendered = {"apiVersion": rtype.api_version, "kind": rtype.kind}
    rendered.update(
        copy.deepcopy({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
    )
    return rendered


def spec_part(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Everything a generation covers: all but apiVersion, kind, metadata and status."""
    return {k: v for k, v in obj.items() if k not in _NOT_SPEC}


def prepare_create(
    rtype: ResourceType, namespace: str | None, body: Any, mode: WriteMode, now: datetime
) -> dict[str, Any]:
    """The object a create stores (before its resourceVersion is assigned).

    Raises:
        ApiError: 400 for a body that is not an object of this kind or version or a namespace
            mismatch, 422 without a name.
    """
    _check_api_version(rtype, body)
    obj = _checked_body(rtype, body)
    metadata = obj.setdefault("metadata", {})
    _assign_name(rtype, metadata)
    if mode != "seed":
        _check_name(rtype, str(metadata["name"]))
        _check_size(rtype, obj)
    _assign_namespace(rtype, metadata, namespace, mode)
    given_generation = metadata.get("generation")
    for key in _SERVER_OWNED:
        metadata.pop(key, None)
    metadata["uid"] = str(uuid.uuid4())
    metadata["creationTimestamp"] = timestamp(now)
    keep_generation = mode == "seed" and isinstance(given_generation, int)
    if rtype.has_generation:
        metadata["generation"] = given_generation if keep_generation else 1
    if mode != "seed" and rtype.has_status and not rtype.status_on_create:
        obj.pop("status", None)
    _drop_empty_metadata(metadata)
    _default_status(rtype, obj)
    return obj


def prepare_update(
    rtype: ResourceType, old: Mapping[str, Any], body: Any, mode: WriteMode
) -> dict[str, Any]:
    """The object a replace (PUT, or a patch's result) stores.

    Raises:
        ApiError: 400 for a wrong kind or name, 409 for a stale `metadata.resourceVersion`.
    """
    incoming = _checked_body(rtype, body)
    name = old["metadata"]["name"]
    incoming_meta = incoming.setdefault("metadata", {})
    if incoming_meta.get("name", name) != name:
        given = incoming_meta["name"]
        message = f"the name of the object ({given}) does not match the name on the URL ({name})"
        raise st.ApiError(400, message)
    wanted_rv = incoming_meta.get("resourceVersion")
    if mode != "seed" and wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
        raise st.conflict(rtype.plural, rtype.group, name)
    new = _merge_isolated(rtype, old, incoming, mode)
    metadata = new.setdefault("metadata", {})
    for key in (*_SERVER_OWNED, "name", "namespace"):
        if key in old["metadata"]:
            metadata[key] = old["metadata"][key]
        else:
            metadata.pop(key, None)
    if rtype.has_generation:
        bump = _generation_part(rtype, old) != _generation_part(rtype, new)
        metadata["generation"] = int(old["metadata"].get("generation", 1)) + (1 if bump else 0)
    if mode != "seed":
        _check_size(rtype, new)
    _drop_empty_metadata(metadata)
    _default_status(rtype, new)
    return new


def mark_deleted(old: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The object a delete leaves while finalizers hold it: deletionTimestamp and a zero grace
    period set, and the generation (where it has one) bumped, as k8s.io/apiserver
    pkg/registry/rest/delete.go `BeforeDelete` does."""
    marked = {**old, "metadata": dict(old["metadata"])}
    metadata = marked["metadata"]
    metadata["deletionTimestamp"] = timestamp(now)
    metadata["deletionGracePeriodSeconds"] = 0
    generation = metadata.get("generation")
    if isinstance(generation, int) and generation > 0:
        metadata["generation"] = generation + 1
    return marked


def check_conditional_update(rtype: ResourceType, body: Any, mode: WriteMode) -> None:
    """A PUT of a custom resource must carry the resourceVersion it replaces: the
    custom-resource strategy refuses unconditional updates (k8s.io/apiextensions-apiserver
    pkg/registry/customresource/strategy.go `AllowUnconditionalUpdate`: false).

    Raises:
        ApiError: 422 Invalid without `metadata.resourceVersion`.
    """
    metadata = body.get("metadata") if isinstance(body, dict) else None
    given = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
    if rtype.custom and mode != "seed" and not given:
        name = str((metadata or {}).get("name", ""))
        cause = "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
        raise st.invalid(rtype.kind, rtype.group, name, cause)


def _generation_part(rtype: ResourceType, obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a generation covers. A custom resource without a status subresource counts every
    change but metadata, status included (k8s.io/apiextensions-apiserver
    pkg/registry/customresource/strategy.go `PrepareForUpdate`); others count the spec."""
    if rtype.custom and not rtype.has_status:
        return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    return spec_part(obj)


def apply_patch(old: Mapping[str, Any], patch_type: PatchType, patch: Any) -> Any:
    """The whole object after a merge, JSON or strategic merge patch (not yet isolated or
    checked; the server refuses a strategic merge patch on a custom resource before this).

    Raises:
        ApiError: 400 for a malformed patch, 422 for one that does not apply.
    """
    if patch_type == "json":
        return json_patch(old, patch)
    if patch_type == "strategic":
        return strategic_merge(old, patch)
    return merge_patch(old, merge_patch_document(patch))


def check_patched_kind(rtype: ResourceType, patched: Any) -> None:
    """A patch that turns a built-in object into another kind fails its conversion back
    (k8s.io/apiserver pkg/endpoints/handlers/patch.go `applyPatch`: a 422 on the field `patch`).

    Raises:
        ApiError: 422 Invalid, the patched object quoted as the real server quotes it.
    """
    kind = patched.get("kind") if isinstance(patched, dict) else None
    if rtype.custom or kind in (None, rtype.kind):
        return
    version = str(patched.get("apiVersion", rtype.api_version)).rpartition("/")[2]
    internal = rtype.group.split(".")[0] or "core"
    quoted = json.dumps(json.dumps(patched, separators=(",", ":")))
    said = f"converting ({version}.{kind}) to ({internal}.{rtype.kind}): unknown conversion"
    cause = f"Invalid value: {quoted}: {said}"
    details = {"causes": [{"reason": "FieldValueInvalid", "message": cause, "field": "patch"}]}
    raise st.ApiError(422, f' "" is invalid: patch: {cause}', reason="Invalid", details=details)


def is_unchanged(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a write changes nothing (then it is a no-op: no new resourceVersion, no event)."""
    strip = ("resourceVersion",)
    old_meta = {k: v for k, v in old.get("metadata", {}).items() if k not in strip}
    new_meta = {k: v for k, v in new.get("metadata", {}).items() if k not in strip}
    return old_meta == new_meta and {**old, "metadata": {}} == {**new, "metadata": {}}


def _checked_body(rtype: ResourceType, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise st.ApiError(400, f"the body of the request must be a JSON object, not {body!r:.40}")
    kind = body.get("kind")
    if kind not in (None, rtype.kind):
        message = f"the kind in the data ({kind}) does not match the expected kind ({rtype.kind})"
        raise st.ApiError(400, message)
    obj = copy.deepcopy(body)
    obj["apiVersion"], obj["kind"] = rtype.api_version, rtype.kind
    if not isinstance(obj.get("metadata", {}), dict):
        raise st.ApiError(400, "metadata must be a JSON object")
    return obj


def _check_api_version(rtype: ResourceType, body: Any) -> None:
    """A create names the version of its URL, or none (then the URL's is taken): k8s.io/apiserver
    pkg/endpoints/handlers/create.go `AcceptsGroupVersion`, a 400 BadRequest otherwise."""
    given = body.get("apiVersion") if isinstance(body, dict) else None
    if given and given != rtype.api_version:
        message = (
            f"the API version in the data ({given}) does not match the expected API version "
            f"({rtype.api_version})"
        )
        raise st.ApiError(400, message)


def _assign_name(rtype: ResourceType, metadata: dict[str, Any]) -> None:
    if not metadata.get("name") and metadata.get("generateName"):
        metadata["name"] = f"{metadata['generateName']}{secrets.token_hex(3)[:5]}"
    if not metadata.get("name"):
        cause = "metadata.name: Required value: name or generateName is required"
        raise st.invalid(rtype.kind, rtype.group, "", cause)


def _check_name(rtype: ResourceType, name: str) -> None:
    """Refuse a name of the wrong format (k8s.io/apimachinery pkg/api/validation
    `ValidateObjectMeta`: one cause per problem).

    Raises:
        ApiError: 422 Invalid.
    """
    problems = []
    if (rtype.group, rtype.kind) in _ANY_NAMED:
        return
    if (rtype.group, rtype.kind) in _LABEL_NAMED:
        if len(name) > 63:
            problems.append("must be no more than 63 characters")
        if not _DNS1123_LABEL.match(name):
            dotted = _DNS1123_SUBDOMAIN.match(name) is not None
            problems.append("must not contain dots" if dotted else _LABEL_FORMAT)
    else:
        if len(name) > 253:
            problems.append("must be no more than 253 characters")
        if not _DNS1123_SUBDOMAIN.match(name):
            problems.append(_SUBDOMAIN_FORMAT)
    causes = [f'metadata.name: Invalid value: "{name}": {problem}' for problem in problems]
    if causes:
        cause = causes[0] if len(causes) == 1 else f"[{', '.join(causes)}]"
        raise st.invalid(rtype.kind, rtype.group, name, cause)


def _check_size(rtype: ResourceType, obj: Mapping[str, Any]) -> None:
    """A ConfigMap holds at most 1 MiB of values, `data` and decoded `binaryData` together
    (k8s.io/kubernetes pkg/apis/core/validation `ValidateConfigMap`).

    Raises:
        ApiError: 400 for binaryData that is not base64, 422 Invalid past the limit.
    """
    if (rtype.group, rtype.kind) != ("", "ConfigMap"):
        return
    total = sum(len(str(v).encode()) for v in (obj.get("data") or {}).values())
    for value in (obj.get("binaryData") or {}).values():
        try:
            total += len(base64.b64decode(str(value), validate=True))
        except (binascii.Error, ValueError) as exc:
            message = f'ConfigMap in version "v1" cannot be handled as a ConfigMap: {exc}'
            raise st.ApiError(400, message) from exc
    if total > MAX_CONFIG_MAP_BYTES:
        name = str(obj.get("metadata", {}).get("name", ""))
        cause = f"[]: Too long: may not be more than {MAX_CONFIG_MAP_BYTES} bytes"
        raise st.invalid(rtype.kind, rtype.group, name, cause)


def _drop_empty_metadata(metadata: dict[str, Any]) -> None:
    """Empty labels, annotations and finalizers are not kept (Go's `omitempty`)."""
    for key in ("labels", "annotations", "finalizers"):
        if key in metadata and not metadata[key]:
            del metadata[key]


def _assign_namespace(
    rtype: ResourceType, metadata: dict[str, Any], namespace: str | None, mode: WriteMode
) -> None:
    if not rtype.namespaced:
        metadata.pop("namespace", None)
        return
    given = metadata.get("namespace")
    if namespace and given and given != namespace:
        message = (
            "the namespace of the provided object does not match the namespace sent on the request"
        )
        raise st.ApiError(400, message)
    chosen = namespace or given or ("default" if mode == "seed" else None)
    if not chosen:
        raise st.ApiError(400, "an empty namespace may not be set during creation")
    metadata["namespace"] = chosen


def _merge_isolated(
    rtype: ResourceType, old: Mapping[str, Any], incoming: dict[str, Any], mode: WriteMode
) -> dict[str, Any]:
    if mode == "status":
        new = copy.deepcopy(dict(old))
        new.pop("status", None)
        if "status" in incoming:
            new["status"] = incoming["status"]
        return new
    if mode == "main" and rtype.has_status:
        incoming.pop("status", None)
        if "status" in old:
            incoming["status"] = copy.deepcopy(old["status"])
    return incoming


def _default_status(rtype: ResourceType, obj: dict[str, Any]) -> None:
    if rtype == CRD_TYPE and not (obj.get("status") or {}).get("conditions"):
        obj["status"] = crd_status(obj)
    elif rtype.kind == "Namespace" and rtype.group == "" and not obj.get("status"):
        obj["status"] = {"phase": "Active"}
