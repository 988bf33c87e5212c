"""The one way a change is made: ask, claim once, the approval gate, as the person, the record.

At the command the person must be an operator whose Kubernetes identity can be told; the kind
then reads and decides (`prepare`): a change that asks Confirm is sealed into the button
(`bot.access.confirmations`, 5 minutes). A valid click (the clicker an operator again, the
Confirm used once on every replica) or a change made at once goes through the approval gate
on a protected cluster (`bot.changes.approval`), else is made (`apply`) with its patches sent
as the person and recorded (`bot.changes.record`). Nothing here calls back up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from bot.access import approvals, audit, confirmations
from bot.access.confirmations import AskedChange
from bot.access.once import OnceUnavailable
from bot.changes import approval, params, record, render
from bot.changes.kinds import Ask, ChangeKind, Described, Run, Underway
from bot.changes.ports import ServiceParts
from bot.changes.progress import InPlace, Respond
from bot.core import errors
from bot.kube.acting import ActingAs, acting_as
from bot.kube.identity import Impersonation
from bot.kube.ports import KubeWriter
from bot.slack import blocks
from bot.slack.blocks import Message, Text


class Asker(Protocol):
    """Who typed the command, where, and the response_url to answer on (`respond`)."""

    @property
    def user_id(self) -> str: ...

    @property
    def channel_id(self) -> str: ...

    @property
    def respond(self) -> Respond | None: ...


class ChangePipeline:
    """Every change of one service goes through here; `kinds` by action name
    (`bot.changes.registry`), and one request per object at a time (`underway`)."""

    def __init__(self, parts: ServiceParts, kinds: Mapping[str, ChangeKind[Any]]) -> None:
        self.parts = parts
        self.kinds = kinds
        self.underway = Underway()

    async def ask(self, action: str, change: object, asker: Asker) -> Message:
        """A change asked for by a command: the Confirm to click, the answer instead, or (a
        change made at once) its result, or the note that it waits for an approver.

        Raises:
            NotAllowed, UserError: not an operator, no identity, or what `prepare` raises.
        """
        kind = self.kinds[action]
        if not isinstance(change, kind.params):
            raise TypeError(f"{action} takes {kind.params.__name__}, not {type(change).__name__}")
        described, user = kind.describe(change), asker.user_id
        await self.parts.gate.require_operator(user, described.operation)
        await self._person(user, described)
        run = self._run(self.parts.kube_for(described.cluster), user, user, asker.channel_id)
        prepared = await kind.prepare(change, run)
        if prepared is not None and not isinstance(prepared, Ask):
            return prepared  # nothing to do, or refused: said, nothing asked
        encoded, channel, now = params.encode(change), asker.channel_id, self.parts.clock()
        asked = confirmations.new_pending(
            action, encoded, user_id=user, channel_id=channel, now=now
        )
        if isinstance(prepared, Ask):
            sealed = confirmations.seal(asked, self.parts.confirm_key)
            message = blocks.confirmation_message(prepared.title, prepared.lines, sealed)
            return {**message, "response_type": "ephemeral"}
        if approvals.needs_approval(self.parts.settings, described.cluster):
            note = await approval.request(self.parts, asked, described)
            return {**note, "response_type": "ephemeral", "replace_original": False}
        return await self._make(kind, change, asked, user, asker.respond)

    async def confirm(self, user: str, value: str) -> Message:
        """`Confirm`: a valid click by an operator makes the change, once (or asks approval).

        Raises:
            UserError, NotAllowed: not ours, expired, used, unknown, or not an operator.
        """
        asked = confirmations.unseal(value, self.parts.confirm_key, self.parts.clock())
        await self.parts.gate.require_operator(user, asked.action)
        if asked.action not in self.kinds:
            raise errors.UserError(f"'{asked.action}' cannot be confirmed in this version.")
        kind, change = self._decoded(asked.action, asked.params)
        await self._claim_once(asked)
        described = kind.describe(change)
        if approvals.needs_approval(self.parts.settings, described.cluster):
            return await approval.request(self.parts, asked, described)
        result = await self._make(kind, change, asked, user)
        return {**result, "replace_original": True}

    async def cancel(self, user: str, value: str) -> Message:
        """`Cancel`: nothing changes, and the Confirm can no longer be used anywhere."""
        await self._claim_once(
            confirmations.unseal(value, self.parts.confirm_key, self.parts.clock())
        )
        return render.cancelled(user)

    async def approve(self, user: str, change_id: str) -> Message:
        """`Approve` or `/kai approve CHANGE_ID`: checked, ended once, then made as its
        requester, every record naming the approver too.

        Raises:
            UserError / NotAllowed: no such request, it ended, `user` asked for it, or is not
                an operator and approver, or the requester no longer qualifies (the request
                ends); nothing changed. What the change raised, once made.
        """
        waiting = await approval.open_request(self.parts, change_id, user)
        kind, change = self._decoded(waiting.action, waiting.params)
        await approval.check_requester(self.parts, waiting, user, kind.describe(change))
        approved = await approval.approve(self.parts, waiting, user)
        try:
            with audit.approved(approved.decided_by, approved.id) as context:
                asked = approved.pending()
                result = await self._make(kind, change, asked, approved.requested_by)
        except errors.BotError as e:
            await approval.finish(self.parts, approved, f"failed: {e}")
            raise
        if any(outcome != "failed" for outcome in context.outcomes):
            await approval.annotate(self.parts, approved, kind.describe(change))
        await approval.finish(self.parts, approved, str(result.get("text", "")))
        return {**result, "response_type": "ephemeral", "replace_original": False}

    async def cancel_request(self, user: str, change_id: str) -> Message:
        """`Cancel` on an approval request (`bot.changes.approval.cancel`)."""
        return await approval.cancel(self.parts, user, change_id)

    async def _make(
        self,
        kind: ChangeKind[Any],
        change: object,
        asked: AskedChange,
        actor: str,
        respond: Respond | None = None,
    ) -> Message:
        """Make the change as `actor` (its patches sent as them), and record it; a change made
        at once answers in place (`respond`)."""
        described = kind.describe(change)
        kube = await self._kube_as(described, actor)
        reply = InPlace(respond, started=kind.announced)
        run = self._run(kube, actor, asked.requested_by, asked.channel_id, reply)
        return await reply.replacing(self._apply(kind, change, described, run, reply))

    async def _apply(
        self,
        kind: ChangeKind[Any],
        change: object,
        described: Described,
        run: Run,
        reply: InPlace,
    ) -> Message:
        try:
            done = await kind.apply(change, run)
        except errors.BotError as e:
            if reply.started:  # a change made at once is on record once it has started
                await record.record_failure(self.parts, kind.announced, described, run, e)
            raise
        await record.record_done(self.parts, kind.announced, done, run, _acting(run.kube))
        return done.reply

    def _run(
        self,
        kube: KubeWriter,
        user: str,
        requested_by: str,
        channel_id: str,
        reply: InPlace | None = None,
    ) -> Run:
        parts = self.parts

        async def announce(text: Text) -> None:
            await record.announce(parts, channel_id, text)

        run = Run(parts.settings, kube, user, requested_by, channel_id, parts.clock, self.underway)
        if reply is None:  # prepared at the command: nothing to post yet
            return run
        return replace(run, started=reply.start, announce=announce)

    async def _kube_as(self, described: Described, actor: str) -> KubeWriter:
        """The cluster's gateway for a change `actor` asked for: its patches sent as that
        person when `access.impersonate` says so, its reads the bot's own.

        Raises:
            NotAllowed, UserError: the person's identity cannot be told: nothing is sent, and
                never as the bot instead.
        """
        kube = self.parts.kube_for(described.cluster)
        person = await self._person(actor, described)
        return kube if person is None else acting_as(kube, person)

    async def _person(self, user: str, described: Described) -> Impersonation | None:
        """Whom `user`'s change is sent as (`Gate.person`); a refusal (no email, a group or
        address no header can carry) is the change's one `failed` audit line.

        Raises:
            NotAllowed, UserError: as `Gate.person`.
        """
        try:
            return await self.parts.gate.person(user)
        except errors.NotAllowed as e:
            failed = described.failure(user, self.parts.clock())
            audit.log_change(replace(failed, note=str(e)))
            raise

    def _decoded(self, action: str, raw: Mapping[str, str]) -> tuple[ChangeKind[Any], object]:
        kind = self.kinds.get(action)
        if kind is None:
            raise errors.UserError(f"'{action}' cannot be carried out in this version.")
        return kind, params.decode(kind.params, raw)

    async def _claim_once(self, asked: AskedChange) -> None:
        """Use the Confirm up, on every replica, for good (remembered until it expires).

        Raises:
            UserError: it was used (confirmed or cancelled) before, or that cannot be told
                now: a change fails closed.
        """
        key = confirmations.once_key(asked)
        try:
            first = await self.parts.once.claim(key, asked.expires_at, self.parts.clock())
        except OnceUnavailable as e:
            raise errors.UserError(
                f"Cannot tell whether this confirmation was already used ({e}); nothing was "
                "changed. Try again in a moment."
            ) from e
        if not first:
            raise errors.UserError("This confirmation was already used; nothing more was changed.")


def _acting(kube: KubeWriter) -> dict[str, str]:
    """For the audit line: whom a change was sent as, and by whom (empty: as the bot)."""
    return kube.audit_details() if isinstance(kube, ActingAs) else {}
