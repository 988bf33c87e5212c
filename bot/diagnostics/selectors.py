"""Label selectors of Deployments and Services: as query text, and matched in memory.

Pure. A Deployment's `spec.selector` (matchLabels, matchExpressions) becomes the `labelSelector`
the API server filters by; when one list serves several Deployments (`/kai diagnose kai`), the
same selector is matched here against each object's labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core import conditions


def selector_text(selector: Mapping[str, Any]) -> str:
    """`app=x,tier in (a,b),!legacy` for a LabelSelector (matchLabels and matchExpressions)."""
    terms = [
        f"{k}={v}" for k, v in sorted(conditions.as_mapping(selector.get("matchLabels")).items())
    ]
    for expression in selector.get("matchExpressions") or []:
        key, op = str(expression.get("key", "")), str(expression.get("operator", ""))
        values = ",".join(str(v) for v in expression.get("values") or [])
        terms.append(
            {
                "In": f"{key} in ({values})",
                "NotIn": f"{key} notin ({values})",
                "Exists": key,
                "DoesNotExist": f"!{key}",
            }.get(op, "")
        )
    return ",".join(t for t in terms if t)


def service_selector(selector: Mapping[str, Any]) -> dict[str, Any]:
    """A Service's `spec.selector` (plain labels) as a LabelSelector."""
    return {"matchLabels": dict(selector)}


def matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether `labels` satisfy a LabelSelector; an empty selector matches nothing here, as a
    Deployment without one selects no pods."""
    wanted = conditions.as_mapping(selector.get("matchLabels"))
    expressions = selector.get("matchExpressions") or []
    if not wanted and not expressions:
        return False
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    return all(_expression_holds(e, labels) for e in expressions)


def _expression_holds(expression: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key, op = str(expression.get("key", "")), str(expression.get("operator", ""))
    values = {str(v) for v in expression.get("values") or []}
    if op == "In":
        return key in labels and str(labels[key]) in values
    if op == "NotIn":
        return key not in labels or str(labels[key]) not in values
    if op == "Exists":
        return key in labels
    return key not in labels  # DoesNotExist
