"""How a diagnosis looks in Slack: per component its verdict, pods, findings, Warning events,
log tail (in a code block) and endpoints. The same words go in the fallback text.

Pure: plain dicts through `bot.slack.blocks`. Everything from the cluster is escaped (and log
lines were redacted before they got here); backticks are neutralised so a log line cannot close
its code block. Long pod lists are cut to the pods that need a look, saying how many are left out.
"""

from __future__ import annotations

from bot.diagnostics.cause import HEALTHY_UNDER_ALERT
from bot.diagnostics.model import (
    Cause,
    Component,
    ContainerState,
    Diagnosis,
    EventLine,
    LogTail,
    PodState,
)
from bot.diagnostics.pods import failing_container
from bot.slack.blocks import (
    ICONS,
    Block,
    Message,
    context,
    escape,
    fit_message,
    header,
    section,
    text_message,
)

MAX_PODS = 8  # per component; the rest are counted
_BACKTICK = "\u02cb"  # looks like ` but cannot end a code block


def diagnosis_message(diagnosis: Diagnosis) -> Message:
    """The `/kai diagnose` reply (and an alert's first thread reply)."""
    title = f"Diagnosis of {diagnosis.subject} on {diagnosis.cluster}: {diagnosis.health.value}"
    problems = sum(1 for x in diagnosis.components if not x.health.is_healthy)
    when = f"{diagnosis.at:%Y-%m-%d %H:%M:%S} UTC"
    blocks: list[Block] = [
        header(title),
        context(f"checked {when} · {len(diagnosis.components)} looked at · {problems} not healthy"),
    ]
    if diagnosis.cause is not None:
        blocks.append(section(cause_mrkdwn(diagnosis.cause)))
    blocks += [context(escape(note)) for note in diagnosis.notes]
    for component in diagnosis.components:
        blocks += component_blocks(component)
    if diagnosis.cause is not None and diagnosis.components_look_healthy:
        blocks.append(context(escape(HEALTHY_UNDER_ALERT)))
    return fit_message({"text": diagnosis_text(diagnosis, title), "blocks": blocks})


def cause_mrkdwn(cause: Cause) -> str:
    """The alert's cause first: the condition in its words, then a line per thing it names."""
    lines = [f"{ICONS[cause.health]} *Why it fired:* {escape(cause.condition)}"]
    lines += [f"• {escape(name)}" for name in cause.names]
    return "\n".join(lines)


def failed_message(subject: str, cluster: str, error: BaseException) -> Message:
    """One line when a diagnosis could not be made (an alert's thread still gets its page)."""
    text = f"Could not diagnose {subject} on {cluster}: {error}"
    return text_message(escape(text), mrkdwn=f":warning: {escape(text)}")


def component_blocks(component: Component) -> list[Block]:
    """A component's verdict and pods, then its events, log and endpoints, one block each."""
    head = f"{ICONS[component.health]} *{escape(component.title)}*: "
    lines = [head + f"{component.health.value} — {escape(component.summary)}"]
    lines += [f"• {pod_line(pod)}" for pod in _shown(component.pods)]
    hidden = len(component.pods) - len(_shown(component.pods))
    if hidden:
        lines.append(f"• … {hidden} more pod{'s' if hidden != 1 else ''}, running and ready")
    lines += [f"→ {escape(f)}" for f in component.findings]
    blocks = [section("\n".join(lines))]
    if component.events:
        blocks.append(section(events_mrkdwn(component.events)))
    if component.log is not None:
        blocks.append(section(log_mrkdwn(component.log)))
    if component.endpoints is not None:
        blocks.append(context(escape(endpoints_text(component))))
    return blocks


def _shown(pods: tuple[PodState, ...]) -> list[PodState]:
    """The pods worth a line: every one with a problem first, then others up to MAX_PODS."""
    troubled = [p for p in pods if _is_troubled(p)]
    rest = [p for p in pods if not _is_troubled(p)]
    return (troubled + rest)[: max(MAX_PODS, 0)]


def _is_troubled(pod: PodState) -> bool:
    return bool(pod.unschedulable) or pod.phase != "Running" or failing_container(pod) is not None


def pod_line(pod: PodState) -> str:
    """`binder-7c9 Running, 0/1 ready, 5 restarts: binder CrashLoopBackOff (last OOMKilled …)`."""
    restarts = f"{pod.restarts} restart{'s' if pod.restarts != 1 else ''}"
    text = f"`{_code(pod.name)}` {escape(pod.phase)}, {pod.ready_text} ready, {restarts}"
    container = failing_container(pod)
    if container is not None:
        text += f": {escape(container_words(container))}"
    elif pod.unschedulable:
        text += ": not scheduled"
    return text


def container_words(container: ContainerState) -> str:
    """`binder CrashLoopBackOff (last OOMKilled, exit 137)`."""
    prefix = "init " if container.init else ""
    now = container.reason or container.state
    if container.state == "terminated" and container.exit_code is not None:
        now += f", exit {container.exit_code}"
    text = f"{prefix}{container.name} {now}"
    if container.has_previous:
        code = f", exit {container.last_exit_code}" if container.last_exit_code is not None else ""
        text += f" (last {container.last_reason or 'ended'}{code})"
    return text


def events_mrkdwn(events: tuple[EventLine, ...]) -> str:
    lines = ["*Warning events, last hour, newest first*"]
    lines += [f"• {escape(event_text(e))}" for e in events]
    return "\n".join(lines)


def event_text(event: EventLine) -> str:
    """`12:01 BackOff ×12 on Pod binder-7c9: Back-off restarting failed container`."""
    when = f"{event.last_seen:%H:%M} " if event.last_seen else ""
    times = f" ×{event.count}" if event.count > 1 else ""
    return f"{when}{event.reason}{times} on {event.kind} {event.name}: {event.message}"


def log_mrkdwn(tail: LogTail) -> str:
    head = f"*{log_title(tail)}*"
    if tail.unavailable:
        return f"{head}\n{escape(tail.unavailable)}"
    if not tail.lines:
        return f"{head}\n(empty)"
    return f"{head}\n```{_code(chr(10).join(tail.lines))}```"


def log_title(tail: LogTail) -> str:
    which = "previous instance, before its last restart" if tail.previous else "current instance"
    return f"Log of {tail.pod} / {tail.container} ({which}), last {len(tail.lines) or 20} lines"


def endpoints_text(component: Component) -> str:
    endpoints = component.endpoints
    assert endpoints is not None
    ready = ", ".join(endpoints.ready[:5]) or "none"
    text = f"Service {endpoints.service}: {len(endpoints.ready)} ready endpoint(s) ({ready})"
    if endpoints.not_ready:
        text += f"; {len(endpoints.not_ready)} not ready ({', '.join(endpoints.not_ready[:5])})"
    if not endpoints.slices:
        text += "; no EndpointSlice at all"
    return text


def diagnosis_text(diagnosis: Diagnosis, title: str) -> str:
    """The plain-text fallback: verdicts, findings, events and the log, escaped."""
    lines = [title]
    if diagnosis.cause is not None:
        lines.append(f"Why it fired: {diagnosis.cause.condition}")
        lines += [f"  {name}" for name in diagnosis.cause.names]
    lines += diagnosis.notes
    for component in diagnosis.components:
        lines.append(f"{component.title}: {component.health.value} — {component.summary}")
        lines += [f"  {f}" for f in component.findings]
        lines += [f"  event: {event_text(e)}" for e in component.events]
        if component.log is not None:
            lines.append(f"  {log_title(component.log)}")
            lines += [f"    {line}" for line in component.log.lines] or [
                f"    {component.log.unavailable}"
            ]
        if component.endpoints is not None:
            lines.append(f"  {endpoints_text(component)}")
    if diagnosis.cause is not None and diagnosis.components_look_healthy:
        lines.append(HEALTHY_UNDER_ALERT)
    return escape("\n".join(lines))


def _code(text: str) -> str:
    """Text for inside backticks: escaped, and unable to close them."""
    return escape(text).replace("`", _BACKTICK)
