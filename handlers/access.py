"""A change's cluster gateway, sent as the person who asked (`access.impersonate`).

Who may look or change is `bot.access.gate` (`deps.gate`); this only picks the gateway a
confirmed change writes through.
"""

from __future__ import annotations

from bot.kube.acting import ActingAs, acting_as
from bot.kube.ports import KubeWriter
from bot.service.deps import Deps


async def kube_for_change(deps: Deps, cluster: str | None, actor: str) -> KubeWriter:
    """The cluster's gateway for a change `actor` (a Slack user ID) asked for: its patches are
    sent as that person when `access.impersonate` says so, its reads stay the bot's own.

    Raises:
        NotAllowed, UserError: the person's identity cannot be told (no email, Slack cannot be
            asked): nothing is sent, and never as the bot instead.
    """
    kube = deps.kube_for(cluster)
    person = await deps.gate.person(actor)
    return kube if person is None else acting_as(kube, person)


def acting_details(kube: object) -> dict[str, str]:
    """For the audit line: the Kubernetes identity a change was sent as, and by whom (empty
    when it was sent as the bot itself)."""
    if not isinstance(kube, ActingAs):
        return {}
    return kube.audit_details()
