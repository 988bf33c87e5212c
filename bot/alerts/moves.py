"""What a check reads for the memory of moves (`bot.alerts.seen`): the snapshot's `kai-config`
and APIService, and the cluster's Kustomizations, listed through the check's own reads (a
watched copy: at rest this asks the API server nothing).

A cluster without Flux answers with no Kustomizations; one whose RBAC refuses the list (an
overlay without Flux's Role) is not asked again for REFUSED_FOR, so it costs no request per
check. A list that fails otherwise leaves the Kustomizations as they were remembered: a
read that could not be made is never "every Kustomization deleted".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.alerts import seen
from bot.alerts.seen import Sighting
from bot.core import errors
from bot.core.models import ClusterSnapshot, RawObject
from bot.kube import kinds
from bot.kube.ports import KubeReader

log = logging.getLogger(__name__)

REFUSED_FOR = timedelta(hours=1)


class Revisions:
    """The Kustomizations of each cluster, as the checks read them."""

    def __init__(self) -> None:
        self._refused: dict[str, datetime] = {}  # cluster -> when the list was refused

    async def read(self, kube: KubeReader, now: datetime) -> list[RawObject] | None:
        """Every Kustomization (none where Flux is not installed); None when they cannot be
        read now. Never raises."""
        refused = self._refused.get(kube.cluster)
        if refused is not None and now - refused < REFUSED_FOR:
            return None
        try:
            return await kube.list_objects(kinds.KUSTOMIZATION)
        except errors.KubeForbidden as e:
            log.info("cluster %s: Kustomizations not followed for a while: %s", kube.cluster, e)
            self._refused[kube.cluster] = now
        except errors.KubeError as e:
            log.info("cluster %s: Kustomizations not read this time: %s", kube.cluster, e)
        return None


def sightings(
    snapshot: ClusterSnapshot, kustomizations: Sequence[RawObject] | None
) -> tuple[list[Sighting], frozenset[str]]:
    """What the check saw of each followed object, and the kinds it read whole."""
    sighted = seen.config_sighting(snapshot.kai_config)
    sighted += seen.apiservice_sighting(snapshot.apiservice)
    read = {seen.CONFIG, seen.APISERVICE}
    if kustomizations is not None:
        sighted += seen.kustomization_sightings(kustomizations)
        read.add(seen.KUSTOMIZATION)
    return sighted, frozenset(read)
