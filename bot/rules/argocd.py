"""Health of an Argo CD `Application` (`argoproj.io`): its own `status.health.status`, as it stands.

Argo CD has already aggregated its resources' health; this module only maps the word and adds
`status.sync.status`. Pure: no I/O.
"""

from __future__ import annotations

from bot.core import conditions as c
from bot.core.models import Health, RawObject, Verdict

GROUP = "argoproj.io"
KINDS = ("Application",)

# Argo CD's "Missing" (the app's resources do not exist) is reported as Degraded: `evaluate`'s
# verdict words are the five of docs/design.md §1.1, and the message still says "Missing".
_HEALTH_WORDS = {health.value: health for health in Health} | {"Missing": Health.DEGRADED}


def evaluate_application(obj: RawObject) -> Verdict:
    """The verdict for an Argo CD Application."""
    return c.make_verdict(obj, assess_application(obj))


def assess_application(obj: RawObject) -> c.Assessment:
    """Maps `status.health.status`; an absent or unfamiliar word is Unknown."""
    status = c.status(obj)
    health_block = c.as_mapping(status.get("health"))
    word = c.as_text(health_block.get("status"))
    sync = c.as_text(c.as_mapping(status.get("sync")).get("status")) or "not reported"
    health = _HEALTH_WORDS.get(word, Health.UNKNOWN)
    if not word:
        headline = f"Argo CD reports no health yet, sync {sync}"
    elif word not in _HEALTH_WORDS:
        headline = f'Argo CD reports health "{word}", which kai-chatops does not know, sync {sync}'
    else:
        headline = f"Argo CD health {word}, sync {sync}"
    return c.Assessment(health, headline, c.as_text(health_block.get("message")))
