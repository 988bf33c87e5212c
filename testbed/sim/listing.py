"""A list request's options, checked as kube-apiserver checks them before it reads the store.

Pure: `read_list_options` refuses the combinations k8s.io/apimachinery pkg/apis/meta/
internalversion/validation/validation.go `ValidateListOptions` refuses (422 Invalid
`ListOptions.meta.k8s.io`); what a valid resourceVersion then selects is the store's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from testbed.sim import status as st

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"


@dataclass(frozen=True)
class ListOptions:
    """`resourceVersion`, `resourceVersionMatch`, `limit` and `continue` of one list."""

    resource_version: str = ""
    match: str = ""
    limit: int = 0
    continue_token: str = ""


def read_list_options(query: Mapping[str, str], limit: int = 0) -> ListOptions:
    """The list options of a (non-watch) list request.

    Raises:
        ApiError: 422 Invalid for a resourceVersionMatch without a resourceVersion, with a
            continue token, of an unknown value, or "Exact" at resourceVersion "0".
    """
    options = ListOptions(
        query.get("resourceVersion", ""),
        query.get("resourceVersionMatch", ""),
        limit,
        query.get("continue", ""),
    )
    problems = []
    if options.match:
        if not options.resource_version:
            problems.append("resourceVersionMatch is forbidden unless resourceVersion is provided")
        if options.continue_token:
            problems.append("resourceVersionMatch is forbidden when continue is provided")
        if options.match not in (EXACT, NOT_OLDER_THAN):
            problems.append(
                f'Unsupported value: "{options.match}": supported values: "{EXACT}", '
                f'"{NOT_OLDER_THAN}", ""'
            )
        if options.match == EXACT and options.resource_version == "0":
            problems.append('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    causes = [
        f"resourceVersionMatch: {p if p.startswith('Unsupported') else 'Forbidden: ' + p}"
        for p in problems
    ]
    if causes:
        cause = causes[0] if len(causes) == 1 else f"[{', '.join(causes)}]"
        raise st.invalid("ListOptions", "meta.k8s.io", "", cause)
    return options
