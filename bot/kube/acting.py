"""A cluster's gateway for one person's change: its patches sent as that person, the rest as
the bot (`access.impersonate`).

The use-cases take a `KubeWriter`; handing them this one instead of the bare gateway makes every
patch of that change carry the `Impersonation` value, and nothing else: the reads before and
after (the object, following the controller by watch) stay the bot's own, so a person's
missing `get` or `watch` never hides the result of a change they were allowed to make.
"""

from __future__ import annotations

from typing import Any

from bot.core import errors
from bot.core.models import RawObject
from bot.kube.identity import Impersonation
from bot.kube.ports import KubeWatcher, KubeWriter


def acting_as(kube: KubeWriter, identity: Impersonation) -> ActingAs:
    """`kube` with its patches sent as `identity`; it watches when `kube` does."""
    return ActingAs(kube, identity)


class ActingAs:
    """`kube` for reads, creates and watches (its own methods, handed on), `kube` with
    `identity` for patches."""

    def __init__(self, kube: KubeWriter, identity: Impersonation) -> None:
        self.kube = kube
        self.identity = identity
        self.cluster = kube.cluster
        # Who sends it: the gateway's own identity in the cluster, when it can tell.
        self.impersonator = str(getattr(kube, "authenticated_as", "") or "")
        self.get_object = kube.get_object
        self.list_objects = kube.list_objects
        self.server_version = kube.server_version
        self.read_pod_log = kube.read_pod_log
        self.create_object = kube.create_object
        if isinstance(kube, KubeWatcher):  # the bot's own watch (`bot.kube.follow`)
            self.watch_object = kube.watch_object

    async def patch_object(
        self, *args: Any, acting_as: Impersonation | None = None, **options: Any
    ) -> RawObject:
        """`KubePatcher.patch_object` (`bot.kube.ports`), sent as this change's person (an
        explicit `acting_as` wins); an error carries in its `details` whom it was sent as, for
        the action's audit line."""
        person = acting_as or self.identity
        try:
            return await self.kube.patch_object(*args, acting_as=person, **options)
        except errors.KubeError as e:
            e.details = {**e.details, **person.audit_details(self.impersonator)}
            raise

    def audit_details(self) -> dict[str, str]:
        """Whom this change's writes are sent as, and by whom, for its audit line."""
        return self.identity.audit_details(self.impersonator)
