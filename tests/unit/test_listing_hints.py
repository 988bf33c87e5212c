"""What a not-found reply suggests instead (`bot.listing.render.missing_hint`): where an object
of that kind and name exists, the closest names in the namespace typed, other kinds of that name.
"""

from __future__ import annotations

import pytest

from bot.listing.model import Found
from bot.listing.render import missing_hint

MISSING = Found("HelmRelease", "keda", "keda")


def suspend(found: Found) -> str:
    return f"/kai suspend {found.kind} {found.namespace}/{found.name}"


@pytest.mark.parametrize(
    ("same_kind", "others", "hint"),
    [
        pytest.param([], [], "", id="nothing-to-say"),
        pytest.param(
            [Found("HelmRelease", "keda-system", "keda"), Found("HelmRelease", "keda", "other")],
            [],
            " There is one in keda-system: `/kai suspend HelmRelease keda-system/keda`.",
            id="one-namesake-elsewhere",
        ),
        pytest.param(
            [Found("HelmRelease", "a", "keda")],
            [Found("HelmRelease", "b", "keda"), Found("HelmRelease", "a", "keda")],
            " There are 2 in a, b: `/kai suspend HelmRelease a/keda`, "
            "`/kai suspend HelmRelease b/keda`.",
            id="namesakes-from-both-reads-once-each",
        ),
        pytest.param(
            [Found("HelmRelease", "keda", "kedda"), Found("HelmRelease", "keda", "kai"),
             Found("HelmRelease", "other", "kedaa")],
            [],
            " Did you mean `/kai suspend HelmRelease keda/kedda`?",
            id="did-you-mean-in-the-namespace-typed-only",
        ),
        pytest.param(
            [],
            [Found("ScaledJob", "annia", "keda")],
            " Objects named keda elsewhere: ScaledJob annia/keda "
            "(`/kai suspend ScaledJob annia/keda`).",
            id="other-kinds",
        ),
    ],
)  # fmt: skip
def test_a_missing_object_suggests_what_exists(
    same_kind: list[Found], others: list[Found], hint: str
) -> None:
    assert missing_hint(MISSING, same_kind, others, suspend) == hint
