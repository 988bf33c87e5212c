"""The evidence replies: the first replies of a new incident, gathered once by the Lease holder
right after its root went out, and stored rendered in the outbox, so a retry, a restart or
another replica sends those same words: the diagnosis (as `/kai diagnose` renders it, the
alert's cause first), then what changed on the cluster in the hour before (as `/kai timeline`
reads it, through the `ChangesReport` the wiring gives). Either that fails is one line in the
thread; it never costs the page its thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from bot.alerts import gpu_nodes, node_checks, outbox, queue_checks, render_evidence
from bot.alerts.model import AlertState, ClusterAlerts, NoteKind, Owed
from bot.alerts.store import StoreUnavailable, update
from bot.alerts.usecase_context import LOGGER, DeskContext, repair_damaged
from bot.core import errors
from bot.diagnostics import cause, render, subjects, usecase
from bot.diagnostics.subjects import Subject
from bot.kube.ports import KubeReader, PodLogReader
from bot.slack.blocks import Block, Message

log = logging.getLogger(LOGGER)


def with_evidence(
    incident: str, effect_id: str, text: str, blocks: Sequence[Block]
) -> Callable[[ClusterAlerts], tuple[ClusterAlerts, ClusterAlerts]]:
    """The change that stores a rendered diagnosis as `effect_id` of `incident`."""

    def change(state: ClusterAlerts) -> tuple[ClusterAlerts, ClusterAlerts]:
        changed = outbox.gathered(state, incident, effect_id, text, blocks)
        return changed, changed

    return change


def is_next(state: ClusterAlerts, incident: str, effect_id: str) -> bool:
    """Whether `effect_id` heads its incident's outbox (its root is already in Slack)."""
    head = outbox.head(state, incident)
    return head is not None and head.effect_id == effect_id


class ChangesReport(Protocol):
    """What changed on a cluster in the hour before an alert fired (`bot.timeline.usecase`)."""

    async def before_alert(self, kube: KubeReader, alert: AlertState) -> Message:
        """The reply, rendered; never raises (what cannot be read is said in it)."""
        ...


class Evidence:
    """Gathers and stores the evidence replies the outboxes wait for."""

    def __init__(self, context: DeskContext, changes: ChangesReport | None = None) -> None:
        self._context = context
        self._changes = changes

    async def gather(
        self, kube: PodLogReader, cluster: str, now: datetime, known: ClusterAlerts | None
    ) -> list[str]:
        """Diagnose the failing component of every incident whose first reply still waits for
        it, and store the rendered words in its outbox. Returns the incidents whose thread can
        go on now (their root is in Slack). Nothing waits when the state just `known` holds no
        such reply (only a check owes one). Never raises: a store that fails leaves it for
        the next check."""
        ready: list[str] = []
        if known is not None and not outbox.awaiting_evidence(known):
            return ready
        try:
            waiting = outbox.awaiting_evidence((await self._context.store.load(cluster)).state)
            for alert, owed in waiting:
                message = await self.reply(kube, alert, owed, now)
                if await self.keep(cluster, alert.incident, owed, message):
                    ready.append(alert.incident)
        except StoreUnavailable as e:
            log.error("alerts of cluster %s: cannot store a diagnosis: %s", cluster, e)
        return ready

    async def keep(self, document: str, incident: str, owed: Owed, message: Message) -> bool:
        """Store `message`, cut to what the state keeps, as the reply `owed` of `incident` in
        the state `document`; whether it heads that outbox now.

        Raises:
            StoreUnavailable.
        """
        changes = owed.note is not None and owed.note.kind is NoteKind.CHANGES
        kept = render_evidence.CHANGES_KEPT if changes else render_evidence.EVIDENCE_KEPT
        text, blocks = render_evidence.kept_evidence(message, kept)
        change = with_evidence(incident, owed.effect_id, text, blocks)
        state = await update(self._context.store, document, change, repair=repair_damaged)
        return is_next(state, incident, owed.effect_id)

    async def reply(
        self, kube: PodLogReader, alert: AlertState, owed: Owed, now: datetime
    ) -> Message:
        """The evidence `owed` waits for: what changed before `alert`, or its diagnosis."""
        if owed.note is None or owed.note.kind is not NoteKind.CHANGES:
            return await self.diagnose(kube, alert, now)
        if self._changes is None:
            return render_evidence.no_changes(alert.key)
        return await self._changes.before_alert(kube, alert)

    async def diagnose(self, kube: PodLogReader, alert: AlertState, now: datetime) -> Message:
        """The diagnosis of what `alert` points at, as `/kai diagnose` renders it; one line when
        there is nothing to look at or the cluster would not say."""
        key, settings = alert.key, self._context.settings
        if gpu_nodes.is_gpu_node(key):
            return await node_checks.node_evidence(kube, key, command=self._context.command)
        if queue_checks.is_starvation(key):
            return await queue_checks.queue_evidence(
                kube, key, now, after=settings.alerts.starved_after, command=self._context.command
            )
        where = {"kai_namespace": settings.kai.namespace, "apiservice": settings.keda.apiservice}
        if key.is_alertmanager:
            labels = dict(label.partition("=")[::2] for label in alert.labels)
            subject = subjects.subject_for_labels(labels, **where)
        else:
            message = alert.observation.message
            subject = subjects.subject_for_alert(key.kind, key.object, message, **where)
        if subject is None:
            return render_evidence.no_evidence(key)
        return await self._diagnosis(kube, alert, subject, now)

    async def _diagnosis(
        self, kube: PodLogReader, alert: AlertState, subject: Subject, now: datetime
    ) -> Message:
        """`subject` diagnosed, the alert's cause first, and a footer naming the command that
        looks again."""
        key = alert.key
        try:
            diagnosis = await usecase.diagnose(kube, subject, now=now)
        except errors.KubeError as e:
            log.warning("%s: no diagnosis of %s: %s", alert.incident, subject.describe(), e)
            return render.failed_message(subject.describe(), key.cluster, e)
        except Exception:  # a bug must not cost the page its thread: say it, log it
            log.exception("%s: diagnosing %s failed", alert.incident, subject.describe())
            error = RuntimeError("an internal error (the details are in the service log)")
            return render.failed_message(subject.describe(), key.cluster, error)
        observed = alert.observation
        facts = cause.AlertFacts(
            key.kind, key.object, key.condition, observed.reason, observed.message
        )
        message = render.diagnosis_message(cause.explain(diagnosis, facts))
        command = f"{self._context.command} diagnose {subject.describe()}"
        footer = render_evidence.evidence_footer(command)
        return {**message, "blocks": [*message["blocks"], footer]}
