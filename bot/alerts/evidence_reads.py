"""The first reply of an alert whose evidence is read when it fires (a starved queue, a GPU
node): the read's message, or one line saying why there is none. Never raises: a bug must not
cost the page its thread.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.core import errors
from bot.diagnostics import render as render_diagnosis
from bot.slack.blocks import Message

log = logging.getLogger(__name__)


async def read_or_say(
    subject: str, cluster: str, read: Callable[[], Awaitable[Message]]
) -> Message:
    """`read()`'s message; when the cluster would not say, or the read failed, one line that
    says so (logged)."""
    try:
        return await read()
    except errors.KubeError as e:
        log.warning("no evidence of %s on %s: %s", subject, cluster, e)
        return render_diagnosis.failed_message(subject, cluster, e)
    except Exception:
        log.exception("gathering the evidence of %s on %s failed", subject, cluster)
        error = RuntimeError("an internal error (the details are in the service log)")
        return render_diagnosis.failed_message(subject, cluster, error)
