"""Every change kind the bot knows, by the action name its Confirm and approval record carry.

One line per feature that writes: a new kind is its `change` module and a line here. Built
per service (`bot.service.deps.build_deps`), with the settings the kinds take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.changes.kinds import ChangeKind
from bot.gitops import change as gitops_change
from bot.gitops import change_suspend
from bot.keda import change as keda_change
from bot.keda.usecase import AckWait
from bot.nodes import change as nodes_change


def change_kinds(*, keda_wait: AckWait) -> Mapping[str, ChangeKind[Any]]:
    """Each kind by its action name; `keda_wait` is how long a KEDA change waits for KEDA."""
    kinds: tuple[ChangeKind[Any], ...] = (
        *keda_change.kinds(keda_wait),
        *gitops_change.kinds(),
        *change_suspend.kinds(),
        *nodes_change.kinds_of(),
    )
    return {kind.action: kind for kind in kinds}
