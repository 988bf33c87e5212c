"""Pure readers over a raw Kubernetes object: `status.conditions`, generations, metadata, times.

Also holds `Assessment`, the (health, headline, verbatim detail) triple every rule builds before
it becomes a `Verdict` or a `Finding`. Tolerates any shape (a malformed object reads as "absent"),
never raises, and has no clock: callers pass `now`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.core.models import Health, RawObject, Verdict

Condition = Mapping[str, Any]


@dataclass(frozen=True)
class Assessment:
    """A rule's reading of one object: `headline` is ours, `detail` is a controller's, verbatim."""

    health: Health
    headline: str
    detail: str = ""

    @property
    def message(self) -> str:
        """The headline followed by the verbatim detail (multi-line details start on a new line)."""
        return join_message(self.headline, self.detail)


def join_message(headline: str, detail: str) -> str:
    """`headline: detail`, keeping `detail` byte for byte (KAI's start with a newline)."""
    if not detail:
        return headline
    if detail.startswith("\n"):
        return f"{headline}:{detail}"
    separator = ":\n" if "\n" in detail else ": "
    return f"{headline}{separator}{detail}"


def as_mapping(value: object) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one (malformed input reads as absent)."""
    return value if isinstance(value, Mapping) else {}


def as_text(value: object) -> str:
    """A string field as text; absent or non-string values read as ""."""
    return value if isinstance(value, str) else ""


def as_int(value: object) -> int | None:
    """An integer field; absent, boolean or non-integer values read as None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def metadata(obj: RawObject) -> Mapping[str, Any]:
    return as_mapping(obj.get("metadata"))


def object_name(obj: RawObject) -> str:
    return as_text(metadata(obj).get("name"))


def object_namespace(obj: RawObject) -> str | None:
    """`metadata.namespace`, or None for a cluster-scoped (or namespace-less) object."""
    return as_text(metadata(obj).get("namespace")) or None


def object_generation(obj: RawObject) -> int | None:
    return as_int(metadata(obj).get("generation"))


def annotations_of(obj: RawObject) -> Mapping[str, Any]:
    return as_mapping(metadata(obj).get("annotations"))


def labels_of(obj: RawObject) -> Mapping[str, Any]:
    return as_mapping(metadata(obj).get("labels"))


def spec(obj: RawObject) -> Mapping[str, Any]:
    return as_mapping(obj.get("spec"))


def status(obj: RawObject) -> Mapping[str, Any]:
    return as_mapping(obj.get("status"))


def make_verdict(obj: RawObject, assessment: Assessment) -> Verdict:
    """The `evaluate` verdict for `obj`, worded by `assessment`."""
    return Verdict(
        kind=as_text(obj.get("kind")),
        namespace=object_namespace(obj),
        name=object_name(obj),
        health=assessment.health,
        message=assessment.message,
    )


def list_conditions(obj: RawObject) -> list[Condition]:
    """`status.conditions`, keeping only the entries that are mappings."""
    raw = status(obj).get("conditions")
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return []
    return [c for c in raw if isinstance(c, Mapping)]


def find_condition(conditions: Sequence[Condition], type_: str) -> Condition | None:
    """The condition of type `type_`, or None."""
    return next((c for c in conditions if c.get("type") == type_), None)


def condition_status(condition: Condition | None) -> str | None:
    """The status as written: `True`, `False`, `Unknown` (or anything else); None when absent.

    Hand-written YAML may carry an unquoted `status: True`, which loads as a bool.
    """
    if condition is None:
        return None
    value = condition.get("status")
    if isinstance(value, bool):
        return "True" if value else "False"
    return value if isinstance(value, str) else None


def assess_condition(health: Health, condition: Condition | None) -> Assessment:
    """Headline `Ready is False (TriggerError)`, the condition's message verbatim as detail."""
    if condition is None:
        return Assessment(health, "no condition")
    reason = condition_reason(condition)
    headline = f"{as_text(condition.get('type'))} is {condition_status(condition)}"
    headline += f" ({reason})" if reason else ""
    return Assessment(health, headline, condition_message(condition))


def is_condition_true(condition: Condition | None) -> bool:
    return condition_status(condition) == "True"


def condition_reason(condition: Condition | None) -> str:
    return as_text(condition.get("reason")) if condition is not None else ""


def condition_message(condition: Condition | None) -> str:
    """The condition's message exactly as written (never stripped)."""
    return as_text(condition.get("message")) if condition is not None else ""


def observed_generation(condition: Condition | None) -> int | None:
    return as_int(condition.get("observedGeneration")) if condition is not None else None


def format_timestamp(moment: datetime) -> str:
    """RFC 3339 UTC with seconds, as the API server writes times and the bot writes its
    annotations: `2026-08-24T10:00:00Z`, whatever the host's zone."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(value: object) -> datetime | None:
    """An RFC 3339 time (`2026-08-10T09:12:41Z`, nanoseconds allowed) as an aware datetime.

    Naive values are taken as UTC; anything unparsable reads as None.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def last_transition(condition: Condition | None) -> datetime | None:
    return parse_timestamp(condition.get("lastTransitionTime")) if condition is not None else None


def creation_time(obj: RawObject) -> datetime | None:
    return parse_timestamp(metadata(obj).get("creationTimestamp"))


def last_write_time(obj: RawObject) -> datetime | None:
    """When the object was last written, as far as it tells: the newest condition transition,
    `metadata.managedFields[].time` entry, or its creation time.

    KAI stamps `lastTransitionTime` on every condition rewrite, so for KAI objects this is
    "last touched by the operator, or by whoever edited the spec".
    """
    fields = metadata(obj).get("managedFields")
    entries = fields if isinstance(fields, Sequence) and not isinstance(fields, str) else []
    times = [last_transition(c) for c in list_conditions(obj)]
    times += [parse_timestamp(as_mapping(entry).get("time")) for entry in entries]
    times.append(creation_time(obj))
    return max((t for t in times if t is not None), default=None)
