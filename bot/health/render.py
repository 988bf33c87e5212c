"""How a health report looks: the `/kai health` reply in Slack and the `check` terminal output.

Pure: plain dicts built with `bot.slack.blocks`; the same words in blocks and fallback text.
"""

from __future__ import annotations

from bot.core.models import Finding, HealthReport
from bot.slack.blocks import ICONS, Message, context, escape, fit_message, header, section


def health_message(report: HealthReport) -> Message:
    """The `/kai health` reply: the verdict, each problem with its verbatim detail, the rest."""
    problems = report.problems
    healthy = [f for f in report.findings if f.health.is_healthy]
    blocks = [
        header(f"KAI health on {report.cluster}: {report.verdict.value}"),
        context(
            f"checked {report.checked_at:%Y-%m-%d %H:%M:%S} UTC · {len(report.findings)} checks · "
            f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        ),
    ]
    blocks += [section(_finding_mrkdwn(f)) for f in problems]
    if healthy:
        lines = [f"{ICONS[f.health]} {escape(f.subject)}: {escape(f.summary)}" for f in healthy]
        blocks.append(section("\n".join(lines)))
    return fit_message({"text": report_text(report), "blocks": blocks})


def _finding_mrkdwn(finding: Finding) -> str:
    head = f"{ICONS[finding.health]} *{escape(finding.subject)}*: {finding.health.value}"
    text = f"{head}\n{escape(finding.summary)}"
    detail = finding.detail.strip("\n")
    if detail and detail != finding.summary:
        text += f"\n```{escape(detail)}```"
    return text


def report_text(report: HealthReport) -> str:
    """The report as plain text: Slack's notification fallback and the terminal's output."""
    lines = [f"KAI health on {report.cluster}: {report.verdict.value}"]
    for finding in report.findings:
        lines.append(f"- {finding.subject}: {finding.health.value}: {finding.summary}")
        detail = finding.detail.strip("\n")
        if detail and detail != finding.summary:
            lines += [f"    {line}" for line in detail.splitlines()]
    return "\n".join(lines)
