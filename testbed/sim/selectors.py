"""Label and field selectors, as the API server reads `?labelSelector=` and `?fieldSelector=`.

Pure: parsing and matching only. Malformed text raises `ApiError(400)` worded like the real server.
A field selector names field labels, and each kind supports its own few (`field_labels_for`,
`convert_field_labels`, as kube-apiserver v1.37 answers them); a label reads a dotted path, values
compare as strings, and a missing field reads as "".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from testbed.sim.status import ApiError

_SET_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)$")
# A field term's key may be empty: the label check refuses it then (`"" is not a known ...`).
_FIELD_TERM = re.compile(r"^(?P<key>[^\s!=()]*)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)$")
_EXISTS_TERM = re.compile(r"^(?P<neg>!?)\s*(?P<key>[^\s!=()]+)$")


@dataclass(frozen=True)
class Requirement:
    """One comma-separated term of a selector."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!exists"
    values: frozenset[str] = frozenset()

    def matches(self, value: str | None) -> bool:
        """Whether a label (or field) value, None when absent, satisfies this term."""
        if self.op == "exists":
            return value is not None
        if self.op == "!exists":
            return value is None
        if self.op in ("=", "in"):
            return value is not None and value in self.values
        return value is None or value not in self.values


@dataclass(frozen=True)
class Selector:
    """A label selector and a field selector, ANDed; empty ones match everything."""

    labels: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether `obj` passes both selectors."""
        metadata = obj.get("metadata") or {}
        labels = metadata.get("labels") or {}
        if not all(req.matches(labels.get(req.key)) for req in self.labels):
            return False
        return all(req.matches(read_field(obj, req.key)) for req in self.fields)


def parse_selector(label_selector: str = "", field_selector: str = "") -> Selector:
    """Parse both query parameters.

    Raises:
        ApiError: 400 when either is malformed.
    """
    return Selector(parse_label_selector(label_selector), parse_field_selector(field_selector))


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """`app=x,tier!=db,env in (a,b),!legacy` → requirements.

    Raises:
        ApiError: 400 for a term that is not one of the selector forms.
    """
    return tuple(_parse_label_term(term) for term in _split_terms(text))


def parse_field_selector(text: str) -> tuple[Requirement, ...]:
    """`metadata.name=x,metadata.namespace!=y` → requirements (only =, ==, !=).

    Raises:
        ApiError: 400 for anything but `path=value`, `path==value`, `path!=value`.
    """
    requirements = []
    for term in _split_terms(text):
        match = _FIELD_TERM.match(term)
        if match is None:
            # k8s.io/apimachinery pkg/fields/selector.go `parseSelector`
            raise ApiError(400, f"invalid selector: '{text}'; can't understand '{term}'")
        op = "!=" if match["op"] == "!=" else "="
        requirements.append(Requirement(match["key"], op, frozenset({match["value"]})))
    return tuple(requirements)


CUSTOM_RESOURCE_FIELDS = ("metadata.name", "metadata.namespace")

# The built-in kinds with a field-label conversion of their own (k8s.io/kubernetes
# pkg/apis/core/v1/conversion.go): each supported label and the path it reads. Every other
# built-in kind has the scheme's default conversion, `metadata.name` and `metadata.namespace` only
# (k8s.io/apimachinery pkg/runtime/scheme.go `DefaultMetaV1FieldSelectorConversion`).
_OWN_FIELD_LABELS: dict[tuple[str, str], dict[str, str]] = {
    ("", "Namespace"): {"metadata.name": "metadata.name", "status.phase": "status.phase"},
    ("", "Node"): {"metadata.name": "metadata.name", "spec.unschedulable": "spec.unschedulable"},
    ("", "Service"): {
        **{label: label for label in CUSTOM_RESOURCE_FIELDS},
        "spec.clusterIP": "spec.clusterIP",
        "spec.type": "spec.type",
    },
    ("", "Event"): {
        **{
            label: label
            for label in (
                *CUSTOM_RESOURCE_FIELDS,
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "type",
            )
        },
        "source": "source.component",
    },
    ("", "Pod"): {
        **{
            label: label
            for label in (
                *CUSTOM_RESOURCE_FIELDS,
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName",
            )
        },
        "spec.host": "spec.nodeName",  # the old v1 clients' name for spec.nodeName
    },
}


def convert_field_labels(
    selector: Selector,
    group: str,
    kind: str,
    *,
    custom: bool = False,
    selectable: tuple[str, ...] = (),
) -> Selector:
    """The selector with each field label turned into the path it reads, refusing the labels
    the kind does not support as kube-apiserver does (k8s.io/apiserver
    pkg/endpoints/handlers/get.go `ListResource`, a 400):

    - a custom resource: `metadata.name`, `metadata.namespace` and the CRD version's
      selectableFields (k8s.io/apiextensions-apiserver pkg/apiserver/conversion
      `ConvertFieldLabel`): `field label not supported: <label>`;
    - Namespace, Node, Service, Event, Pod: their own labels, `field label not supported: <label>`;
    - any other built-in kind: `"<label>" is not a known field selector: only "metadata.name",
      "metadata.namespace"`.

    Raises:
        ApiError: 400 for a label the kind does not support.
    """
    own = _OWN_FIELD_LABELS.get((group, kind))
    if custom:
        own = {label: label for label in (*CUSTOM_RESOURCE_FIELDS, *selectable)}
    converted = []
    for requirement in selector.fields:
        if own is not None and requirement.key in own:
            path = own[requirement.key]
        elif own is None and requirement.key in CUSTOM_RESOURCE_FIELDS:
            path = requirement.key
        elif own is not None:
            raise ApiError(400, f"field label not supported: {requirement.key}")
        else:
            only = ", ".join(f'"{label}"' for label in CUSTOM_RESOURCE_FIELDS)
            raise ApiError(400, f'"{requirement.key}" is not a known field selector: only {only}')
        converted.append(Requirement(path, requirement.op, requirement.values))
    return Selector(selector.labels, tuple(converted))


def read_field(obj: Mapping[str, Any], path: str) -> str:
    """The value at a dotted path as a string ("" when absent; booleans as true/false)."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    if value is None:
        return _FIELD_DEFAULTS.get(path, "")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# Fields whose Go zero value is what a selector compares when the object leaves them out.
_FIELD_DEFAULTS = {"spec.hostNetwork": "false", "spec.unschedulable": "false"}


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return [term.strip() for term in terms if term.strip()]


def _parse_label_term(term: str) -> Requirement:
    match = _SET_TERM.match(term)
    if match is not None:
        values = frozenset(v.strip() for v in match["values"].split(",") if v.strip())
        return Requirement(match["key"], match["op"], values)
    match = _EQ_TERM.match(term)
    if match is not None:
        op = "!=" if match["op"] == "!=" else "="
        return Requirement(match["key"], op, frozenset({match["value"]}))
    match = _EXISTS_TERM.match(term)
    if match is not None:
        return Requirement(match["key"], "!exists" if match["neg"] else "exists")
    raise ApiError(400, f"unable to parse requirement: {term!r}")
