"""Alertmanager's webhook taken in: the payload read (`alertmanager_webhook`), its group's
incident stepped (`alertmanager_groups`) and saved through the alert desk, then delivered on the
Lease holder; the periodic look at the groups' incidents. The diagnosis of a group whose labels
name a KAI or KEDA component is made on the cluster its `cluster` label names (else the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from bot.alerts.machine import Transition
from bot.alerts.model import AlertState, ClusterAlerts
from bot.alerts.usecase import AlertDesk
from bot.alerts.usecase_external import KubeOf
from bot.config.settings import Settings
from bot.diagnostics.subjects import subject_for_labels
from bot.integrations import alertmanager_groups
from bot.integrations.alertmanager_webhook import Notification, parse_notification
from bot.kube.ports import PodLogReader


def kube_of(settings: Settings, kube: Mapping[str, PodLogReader]) -> KubeOf:
    """The gateway of the cluster an Alertmanager group's `cluster` label names, if one is
    configured so; else the first cluster's."""

    def pick(alert: AlertState) -> PodLogReader:
        labels = dict(label.partition("=")[::2] for label in alert.labels)
        named = labels.get("cluster", "")
        return kube.get(named) or kube[settings.clusters[0].name]

    return pick


async def receive(
    desk: AlertDesk,
    settings: Settings,
    kube: Mapping[str, PodLogReader],
    body: bytes,
    now: datetime,
) -> Notification:
    """One webhook notification, saved as its group's incident (and delivered on the holder).

    Raises:
        BadPayload: the body is not a version-4 payload (nothing is changed);
        StoreUnavailable: it could not be saved (Alertmanager sends it again).
    """
    assert settings.alertmanager is not None, "the webhook is served only when configured"
    notification = parse_notification(body)
    channel = settings.alertmanager.channel or settings.slack.alert_channel
    names_component = subject_for_labels(
        notification.common_labels,
        kai_namespace=settings.kai.namespace,
        apiservice=settings.keda.apiservice,
    )

    def step(state: ClusterAlerts) -> Transition:
        diagnose = names_component is not None
        return alertmanager_groups.receive(state, notification, now, channel, diagnose)

    await desk.take_in(step, kube_of(settings, kube), now)
    return notification


async def look_again(
    desk: AlertDesk, settings: Settings, kube: Mapping[str, PodLogReader], now: datetime
) -> None:
    """The groups' reminders, escalations and silences ending, then what they owe sent (the
    Lease holder's periodic job). Never raises."""
    await desk.alertmanager.tick(kube_of(settings, kube), now)
