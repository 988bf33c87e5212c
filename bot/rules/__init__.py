"""Offline verdicts: picks the rule for a raw object by its API group and kind.

`evaluate_object` never raises: a malformed object or a kind no rule knows becomes an
`Unknown` verdict saying why. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bot.core import conditions as c
from bot.core.models import Health, RawObject, Verdict
from bot.rules import apiservice, argocd, flux, kai, keda

Rule = Callable[[RawObject], Verdict]


def _build_rules() -> dict[tuple[str, str], Rule]:
    rules: dict[tuple[str, str], Rule] = {}
    rules.update({(kai.GROUP, kind): kai.evaluate_kai_object for kind in kai.KINDS})
    rules.update({(apiservice.GROUP, k): apiservice.evaluate_apiservice for k in apiservice.KINDS})
    rules.update({(keda.GROUP, kind): keda.evaluate_keda_object for kind in keda.KINDS})
    for group, kinds in flux.KINDS_BY_GROUP.items():
        rules.update({(group, kind): flux.evaluate_flux_object for kind in kinds})
    rules.update({(argocd.GROUP, kind): argocd.evaluate_application for kind in argocd.KINDS})
    return rules


_RULES = _build_rules()

SUPPORTED_KINDS: tuple[str, ...] = tuple(f"{kind}.{group}" for group, kind in _RULES)
"""What `evaluate_object` understands, as `Kind.group` (e.g. `Config.kai.scheduler`)."""


def evaluate_object(obj: RawObject) -> Verdict:
    """The verdict for one raw object, whatever it is.

    Args:
        obj: the object as the API server or `kubectl get -o yaml` gives it.

    Returns:
        The rule's verdict, or `Unknown` with the reason when the object is malformed or of a
        kind kai-chatops does not evaluate. Never raises.
    """
    if not isinstance(obj, Mapping):
        kind_of_value = type(obj).__name__
        return _unknown(obj, "", f"not a Kubernetes object: a {kind_of_value}, not a mapping")
    kind = obj.get("kind")
    name = c.object_name(obj)
    if not isinstance(kind, str) or not kind:
        return _unknown(obj, "", "not a Kubernetes object: it has no kind")
    if not name:
        return _unknown(obj, kind, f"not a Kubernetes object: this {kind} has no metadata.name")
    api_version = c.as_text(obj.get("apiVersion"))
    if not api_version:
        return _unknown(obj, kind, f"{kind} {name} has no apiVersion, so its API group is unknown")
    rule = _RULES.get((_group_of(api_version), kind))
    if rule is None:
        return _unknown(obj, kind, f"kind {kind} ({api_version}) is not one kai-chatops evaluates")
    return rule(obj)


def _group_of(api_version: str) -> str:
    """`kai.scheduler/v1` → `kai.scheduler`; the core group (`v1`) is ""."""
    group, _, _version = api_version.rpartition("/")
    return group


def _unknown(obj: object, kind: str, message: str) -> Verdict:
    """An Unknown verdict naming whatever of the object could be read."""
    raw: RawObject = obj if isinstance(obj, Mapping) else {}
    return Verdict(
        kind=kind,
        namespace=c.object_namespace(raw),
        name=c.object_name(raw),
        health=Health.UNKNOWN,
        message=message,
    )
