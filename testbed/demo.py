"""`kai-chatops demo`: the service against a simulated cluster and local Slack, with a console.

Type what you would type in Slack (`/kai health`); `sim ACTION` breaks or heals the simulated
cluster; `click LABEL` presses a button of the last reply or of the newest alert; `wait 10s`
lets time pass (an alert needs `alerts.hold`); `home` opens the Slack Home tab (as Slack sends
`app_home_opened`) and prints the view published; `wait for TEXT [up to 30s]` waits until the
bot posts TEXT; `thread` prints the newest alert's whole thread. `--run` executes steps without a
prompt and stops at the first that fails (exit 1, naming it).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.core import durations
from testbed.demo_steps import StepFailed, parse_wait_for, run_sim_action, wait
from testbed.demo_text import block_lines, channel_post, message_lines, reply_as_text
from testbed.slackemu import ApiCall
from testbed.slackemu.records import PostedMessage
from testbed.stack import ALERT_CHANNEL, OPERATOR, Reply, Stack, find_button, running_stack

BANNER = """kai-chatops demo: the service is running against a simulated cluster and a local Slack.
  /kai help            what the bot understands (type any /kai command as in Slack)
  click Confirm        press a button of the last reply, or of the newest alert (Acknowledge)
  sim                  ways to break or heal the simulated cluster (sim dependencies_missing)
  wait 10s             let time pass (a broken cluster alerts after alerts.hold, 6s here;
                       unanswered for alerts.escalate_after, 1m here, it escalates)
  wait for TEXT        until the bot posts TEXT in a channel (up to 60s; wait for X up to 2m)
  thread               the newest alert with its whole thread (the diagnosis first)
  home                 the bot's Home tab: clusters, alerts, pauses and suspends, recent changes
  quit                 stop
What the bot posts in its channels is printed as it happens: [#alerts] lines for the alert
channel, [#demo] lines for the records of changes (pause, resume, sync) in this channel.
The simulated cluster, for kubectl while the demo runs:
  kubectl --kubeconfig {kubeconfig} get configs.kai.scheduler,schedulingshards
"""


# Quicker than a real install's defaults, so a broken cluster raises its alert within seconds
# (paging the on-call group), and one left unanswered for a minute escalates.
DEMO_ALERTS: dict[str, Any] = {
    "alerts": {
        "interval": "3s",
        "hold": "6s",
        "repeat": "10m",
        "mention": ["@platform-oncall"],
        "escalate_after": "1m",
        "escalate_to": ["@platform-leads"],
        "starved_after": "30m",  # `sim starve` backdates its gang's wait past this
        "gpu_nodes": True,  # `sim gpu_lost NODE`: a GPU node loses a GPU
        # `sim scheduler_stall` leaves the scheduler's Lease 10 minutes old: paged at once. The
        # simulated scheduler writes only what a `sim` action says, so a group left pending 6
        # minutes (`sim gpu_quota_exhausted`) looks untouched to this rule, as a stopped one would.
        "stall_after": "5m",
    },
    # `sim reclaim`: KAI's evictions, told in the evicted group's namespace channel (the alert
    # channel here, which the console shows as #alerts).
    "notices": {"evictions": True},
    # A pause without an end (`sim pause_by_hand`, or `/kai pause` without `for`) is reminded
    # of a minute on (at its time, for one made here; by hand, once a sweep saw it), then every
    # minute.
    "changes": {"remind_after": "1m"},
}


def fleet_config(workdir: Path, count: int) -> dict[str, Any]:
    """`--fleet N`: the simulated cluster under N names (sim, sim-2, ...), so `sim ACTION`
    breaks them all at once, with `alerts.group_clusters: N`: one fleet incident listing them."""
    if count < 2:
        return DEMO_ALERTS
    where = {"kubeconfig": str(workdir / "kubeconfig"), "context": "sim"}
    names = ["sim", *(f"sim-{n}" for n in range(2, count + 1))]
    alerts = {**DEMO_ALERTS["alerts"], "group_clusters": count}
    return {**DEMO_ALERTS, "alerts": alerts, "clusters": [{"name": n, **where} for n in names]}


async def run(commands: Sequence[str], *, fleet: int = 0) -> int:
    """Start the stack (`fleet`: that many clusters, `fleet_config`); run `commands` if given,
    else read them from the terminal."""
    logging.getLogger().setLevel(logging.WARNING)  # the console is the demo's output
    with tempfile.TemporaryDirectory(prefix="kai-chatops-demo-") as workdir:
        overrides = fleet_config(Path(workdir), fleet)
        stack_ctx = running_stack(
            Path(workdir), keda_controller=True, config_overrides=overrides, live_scheduler=True
        )
        async with stack_ctx as stack:
            print(BANNER.format(kubeconfig=stack.kubeconfig))
            watcher = asyncio.get_running_loop().create_task(show_channels(stack))
            try:
                if commands:
                    return await run_steps(Console(stack), commands)
                await console(stack)
            finally:
                watcher.cancel()
    return 0


async def run_steps(session: Console, steps: Sequence[str]) -> int:
    """Run `--run` steps in order; 0 when all did what they say, else 1 after naming the step."""
    for number, line in enumerate(steps, start=1):
        print(f"kai> {line}")
        try:
            await session.execute(line)
        except StepFailed as e:
            print(f"kai-chatops demo: step {number} ({line!r}) failed: {e}", file=sys.stderr)
            return 1
    return 0


async def show_channels(stack: Stack) -> None:
    """Print what the bot posts or edits in its channels, as it happens: alerts, and the
    channel records of pauses, resumes and syncs (command replies are shown by the console)."""
    seen = 0

    def unseen(already: int) -> list[ApiCall]:
        calls = stack.slack.calls_to("chat.postMessage") + stack.slack.calls_to("chat.update")
        mine = [c for c in calls if c.ok and c.params.get("channel")]
        return sorted(mine, key=lambda c: c.at)[already:]

    while True:
        new = await stack.slack.wait_for(functools.partial(unseen, seen), timeout=24 * 3600)
        for call in new:
            channel = "#alerts" if call.params.get("channel") == ALERT_CHANNEL else "#demo"
            print(channel_post(channel, call.params, edited=call.method == "chat.update"))
        seen += len(new)


class Console:
    """Remembers the last reply, so `click Confirm` can press one of its buttons."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.last: Mapping[str, Any] | None = None

    async def execute(self, line: str) -> None:
        """One console line: a slash command, `click LABEL`, a `sim` action, a wait, or help.

        Raises:
            StepFailed: the line is no step, or could not do what it says.
        """
        words = line.split()
        if not words:
            return
        if words[0] == "/kai":
            reply = await self.stack.command(" ".join(words[1:]))
            await self.show(reply)
            await self.follow(reply)
        elif words[0] == "click" and len(words) > 1:
            await self.click(" ".join(words[1:]))
        elif words[0] == "sim":
            print(run_sim_action(self.stack, words[1:]))
        elif words[:2] == ["wait", "for"]:
            await self.wait_for_text(words[2:])
        elif words[0] == "wait":
            await wait(words[1:])
        elif words == ["thread"]:
            print(self.newest_thread())
        elif words == ["home"]:
            await self.home()
        else:
            raise StepFailed(
                "unknown step; type a slash command (/kai help), click LABEL, sim, wait 10s,"
                " wait for TEXT, thread, home, or quit"
            )

    async def wait_for_text(self, args: Sequence[str]) -> None:
        """`wait for TEXT [up to DURATION]`: until a message the bot posted in a channel (or
        its thread, as edited) shows TEXT; woken by each change the emulator records."""
        text, span = parse_wait_for(args)
        print(f"(waiting up to {durations.format_duration(span)} for {text!r})")
        try:
            found = await self.stack.slack.wait_for(
                functools.partial(self.posted_with, text), timeout=span.total_seconds()
            )
        except TimeoutError:
            raise StepFailed(
                f"{text!r} was not posted within {durations.format_duration(span)}"
            ) from None
        print(f"(seen: {found})")

    def posted_with(self, text: str) -> str | None:
        """The first line of the first channel message showing `text`, if any (case-insensitive)."""
        wanted = text.lower()
        for channel in self.stack.slack.workspace.channels():
            for message in self.stack.slack.messages(channel):
                lines = message_lines(message.text, message.blocks)
                if wanted in "\n".join(lines).lower() or wanted in message.text.lower():
                    return lines[0]
        return None

    def newest_thread(self) -> str:
        """The newest alert and every reply in its thread, whole."""
        roots = self.stack.slack.root_messages(ALERT_CHANNEL)
        if not roots:
            raise StepFailed("no alert has been posted yet (wait for [CRITICAL] waits for one)")
        root = roots[-1]
        replies = self.stack.slack.thread(ALERT_CHANNEL, root.ts)
        shown = [_whole(root, "(alert)")]
        shown += [
            _whole(reply, f"(reply {n} of {len(replies)})") for n, reply in enumerate(replies, 1)
        ]
        return "\n\n".join(shown)

    async def home(self) -> None:
        """Open the Home tab as the operator and print the view the bot publishes."""
        calls = self.stack.slack.calls_to("views.publish")
        published = sum(1 for c in calls if c.ok and c.params.get("user_id") == OPERATOR)
        await self.stack.driver.open_home(user_id=OPERATOR)
        view = await self.stack.slack.wait_for_home(OPERATOR, count=published + 1, timeout=30.0)
        lines = [line for block in view.get("blocks") or [] for line in block_lines(block)]
        print("(Home tab)\n" + "\n".join(lines))

    async def follow(self, reply: Reply) -> None:
        """Show the in-place update that replaces a "reconciling…" progress reply."""
        if reply.message is None or not reply.text.rstrip().endswith("…"):
            return
        hook = reply.delivery.hook_id
        update = await self.stack.slack.wait_for_response(hook, count=2, timeout=330.0)
        # Replacing keeps the original's visibility: an in-channel reply stays in the channel.
        shown = {"response_type": reply.message.get("response_type"), **update.body}
        print("(updated in place)")
        await self.show(Reply(reply.delivery, shown))

    async def click(self, label: str) -> None:
        """Press `label` in the last reply, else in the newest alert that has such a button."""
        try:
            if self.last is not None and _has_button(self.last, label):
                await self.show(await self.stack.click(label, self.last))
                return
            alert = self.newest_alert_with(label)
            if alert is None:
                raise StepFailed(f"no button labelled {label!r} in the last reply or in an alert")
            message, ts = alert
            reply = await self.stack.click(label, message, channel_id=ALERT_CHANNEL, message_ts=ts)
            await self.show(reply)
        except LookupError as e:
            raise StepFailed(str(e)) from None

    def newest_alert_with(self, label: str) -> tuple[Mapping[str, Any], str] | None:
        """The newest alert root carrying a button labelled `label`, with its ts."""
        for posted in reversed(self.stack.slack.root_messages(ALERT_CHANNEL)):
            message = {"text": posted.text, "blocks": list(posted.blocks)}
            if _has_button(message, label):
                return message, posted.ts
        return None

    async def show(self, reply: Reply) -> None:
        if reply.message is not None:
            self.last = reply.message
        print(reply_as_text(reply.message) if reply.message else reply.text)


async def console(stack: Stack) -> None:
    loop = asyncio.get_running_loop()
    session = Console(stack)
    while True:
        try:
            line = await loop.run_in_executor(None, input, "kai> ")
        except EOFError:
            return
        if line.strip() in ("quit", "exit"):
            return
        try:
            await session.execute(line)
        except StepFailed as e:
            print(e)


def _whole(message: PostedMessage, title: str) -> str:
    return "\n".join(
        [title, *("    " + line for line in message_lines(message.text, message.blocks))]
    )


def _has_button(message: Mapping[str, Any], label: str) -> bool:
    try:
        find_button(message, label)
    except LookupError:
        return False
    return True
