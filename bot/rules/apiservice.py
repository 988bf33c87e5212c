"""Health of an `APIService` (`apiregistration.k8s.io`) from its one `Available` condition.

Unlike Argo CD (which never says Degraded here), `Available` False is Degraded: the API it
serves is down. The backing Service is read from `spec.service`, never assumed, because the
KEDA Helm chart and raw manifests name it differently. Pure: no I/O. An absent APIService is
the live check's business (`bot.health.report`).
"""

from __future__ import annotations

from bot.core import conditions as c
from bot.core.models import Health, RawObject, Verdict

GROUP = "apiregistration.k8s.io"
KINDS = ("APIService",)


def evaluate_apiservice(obj: RawObject) -> Verdict:
    """The verdict for an APIService."""
    return c.make_verdict(obj, assess_apiservice(obj))


def assess_apiservice(obj: RawObject) -> c.Assessment:
    """Available True → Healthy, False → Degraded, Unknown → Unknown, absent → Progressing."""
    available = c.find_condition(c.list_conditions(obj), "Available")
    if available is None:
        return c.Assessment(
            Health.PROGRESSING, "no Available condition yet: the aggregator has not checked it"
        )
    state = c.condition_status(available)
    reason = c.condition_reason(available) or "no reason given"
    message = c.condition_message(available)
    if state == "True":
        return c.Assessment(Health.HEALTHY, f"Available is True ({reason})", message)
    if state == "False":
        headline = f"Available is False ({reason}), {describe_backing_service(obj)}"
        return c.Assessment(Health.DEGRADED, headline, message)
    return c.Assessment(
        Health.UNKNOWN,
        f"Available is {state or 'unset'} ({reason}): the availability check itself failed, "
        f"{describe_backing_service(obj)}",
        message,
    )


def describe_backing_service(obj: RawObject) -> str:
    """The Service behind it (`backed by Service keda/<name> port 443`), or that it is local."""
    service = c.as_mapping(c.spec(obj).get("service"))
    name = c.as_text(service.get("name"))
    if not name:
        return "served locally by kube-apiserver (no spec.service)"
    namespace = c.as_text(service.get("namespace")) or "?"
    port = c.as_int(service.get("port"))
    suffix = f" port {port}" if port is not None else ""
    return f"backed by Service {namespace}/{name}{suffix}"
