"""Impersonated requests, as kube-apiserver judges them: who was asked for, and the 403s.

A request with `Impersonate-User` is recorded with the identity it asked for (`Acting`), then
judged twice, as k8s.io/apiserver pkg/endpoints/filters/impersonation does (1.36+, constrained
impersonation on by default, `constrained_impersonation.go`): may the authenticated user (the
bot's ServiceAccount) impersonate for this request, and may the impersonated identity make it
(RBAC, `grants`). The refusals are worded as the real server words them
(`responsewriters.ForbiddenStatusError`); tests/cluster holds them to a real server.
No HTTP here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from testbed.sim import status as st
from testbed.sim.routing import Route

SERVICE_ACCOUNT = "system:serviceaccount:kai-chatops:kai-chatops"
EXTRA_PREFIX = "impersonate-extra-"


@dataclass(frozen=True)
class Acting:
    """The identity a request asked to be served as (its impersonation headers)."""

    user: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def read_headers(items: list[tuple[str, str]]) -> Acting | None:
    """The impersonation asked for by a request's header lines (a name may repeat), or None.

    Each `Impersonate-Group` line is one group (a comma inside is part of the name, as in Go's
    `http.Header`); an extra's key is lower-cased and percent-decoded, as the real filter does.
    """
    user, groups = "", []
    extra: dict[str, tuple[str, ...]] = {}
    for name, value in items:
        lowered = name.lower()
        if lowered == "impersonate-user":
            user = value
        elif lowered == "impersonate-group":
            groups.append(value)
        elif lowered.startswith(EXTRA_PREFIX):
            key = unquote(lowered[len(EXTRA_PREFIX) :])
            extra[key] = (*extra.get(key, ()), value)
    if not user and not groups and not extra:
        return None
    return Acting(user, tuple(groups), extra)


@dataclass(frozen=True)
class Grant:
    """One RBAC permission of a user or group (`subject`); `namespace` None: every one."""

    subject: str
    verb: str
    resource: str
    group: str = ""
    namespace: str | None = None

    def allows(self, acting: Acting, route: Route) -> bool:
        subjects = {acting.user, *acting.groups, "system:authenticated"}
        return (
            self.subject in subjects
            and self.verb in (route.verb, "*")
            and (self.resource, self.group) == (route.resource, route.group)
            and self.namespace in (None, route.namespace)
        )


@dataclass
class Impersonation:
    """What the simulated cluster lets impersonated requests do.

    `allowed`: the bot's ServiceAccount may impersonate (deploy/components/impersonation is
    applied). `grants`: the impersonated identities' RBAC; None models none (everything is
    allowed), a list allows only what it grants (`grant`).
    """

    allowed: bool = True
    grants: list[Grant] | None = None

    def grant(
        self, subject: str, verb: str, resource: str, group: str = "", namespace: str | None = None
    ) -> None:
        """Let `subject` (a user or a group) `verb` `resource`; starts modelling RBAC."""
        self.grants = [*(self.grants or []), Grant(subject, verb, resource, group, namespace)]

    def refusal(self, acting: Acting, route: Route) -> st.ApiError | None:
        """The 403 the real server answers this impersonated request with, or None."""
        if not self.allowed:
            verb = f"impersonate-on:user-info:{route.verb}"
            return _forbidden(SERVICE_ACCOUNT, verb, route)
        if self.grants is None or any(g.allows(acting, route) for g in self.grants):
            return None
        return _forbidden(acting.user, route.verb, route)


def _forbidden(user: str, verb: str, route: Route) -> st.ApiError:
    """`scaledjobs.keda.sh "x" is forbidden: User "u" cannot patch resource "scaledjobs" in
    API group "keda.sh" in the namespace "annia"` (k8s.io/apiserver
    pkg/endpoints/handlers/responsewriters/errors.go `ForbiddenStatusError`)."""
    subject = st.qualified(route.resource, route.group) + (f' "{route.name}"' if route.name else "")
    scope = f'in the namespace "{route.namespace}"' if route.namespace else "at the cluster scope"
    text = (
        f'{subject} is forbidden: User "{user}" cannot {verb} resource "{route.resource}" '
        f'in API group "{route.group}" {scope}'
    )
    details = {"name": route.name or "", "group": route.group, "kind": route.resource}
    return st.ApiError(403, text, details=details)
