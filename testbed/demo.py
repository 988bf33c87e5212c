"""`kai-chatops demo`: the service against a simulated cluster and local Slack, with a console.

Type what you would type in Slack (`/kai health`); `sim ACTION` breaks or heals the simulated
cluster; `click LABEL` presses a button of the last reply or of the newest alert; `wait 10s`
lets time pass (an alert needs `alerts.hold`); `home` opens the Slack Home tab (as Slack sends
`app_home_opened`) and prints the view published. `--run` executes commands without a prompt.
"""

from __future__ import annotations

import asyncio
import functools
import html
import logging
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.core import durations
from testbed.sim import breakage
from testbed.slackemu import ApiCall
from testbed.stack import ALERT_CHANNEL, OPERATOR, Reply, Stack, find_button, running_stack

BANNER = """kai-chatops demo: the service is running against a simulated cluster and a local Slack.
  /kai help            what the bot understands (type any /kai command as in Slack)
  click Confirm        press a button of the last reply, or of the newest alert (Acknowledge)
  sim                  ways to break or heal the simulated cluster (sim dependencies_missing)
  wait 10s             let time pass (a broken cluster alerts after alerts.hold, 6s here;
                       unanswered for alerts.escalate_after, 1m here, it escalates)
  home                 the bot's Home tab: clusters, alerts, pauses and suspends, recent changes
  quit                 stop
What the bot posts in its channels is printed as it happens: [#alerts] lines for the alert
channel, [#demo] lines for the records of changes (pause, resume, sync) in this channel.
The simulated cluster, for kubectl while the demo runs:
  kubectl --kubeconfig {kubeconfig} get configs.kai.scheduler,schedulingshards
"""


# Quicker than a real install's defaults, so a broken cluster raises its alert within seconds
# (paging the on-call group), and one left unanswered for a minute escalates.
DEMO_ALERTS = {
    "alerts": {
        "interval": "3s",
        "hold": "6s",
        "repeat": "10m",
        "mention": ["@platform-oncall"],
        "escalate_after": "1m",
        "escalate_to": ["@platform-leads"],
    }
}


async def run(commands: Sequence[str]) -> int:
    """Start the stack; run `commands` if given, else read them from the terminal."""
    logging.getLogger().setLevel(logging.WARNING)  # the console is the demo's output
    with tempfile.TemporaryDirectory(prefix="kai-chatops-demo-") as workdir:
        stack_ctx = running_stack(Path(workdir), keda_controller=True, config_overrides=DEMO_ALERTS)
        async with stack_ctx as stack:
            print(BANNER.format(kubeconfig=stack.kubeconfig))
            watcher = asyncio.get_running_loop().create_task(show_channels(stack))
            try:
                if commands:
                    session = Console(stack)
                    for line in commands:
                        print(f"kai> {line}")
                        await session.execute(line)
                    return 0
                await console(stack)
            finally:
                watcher.cancel()
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
            print(alert_line(call.method, call.params))
        seen += len(new)


def alert_line(method: str, params: Mapping[str, Any]) -> str:
    first = html.unescape(str(params.get("text", "")).split("\n")[0])
    channel = "#alerts" if params.get("channel") == ALERT_CHANNEL else "#demo"
    if method == "chat.update":
        return f"\n[{channel}, edited] {first}"
    where = "  ↳ in thread: " if params.get("thread_ts") else ""
    return f"\n[{channel}] {where}{first}"


class Console:
    """Remembers the last reply, so `click Confirm` can press one of its buttons."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.last: Mapping[str, Any] | None = None

    async def execute(self, line: str) -> None:
        """One console line: a slash command, `click LABEL`, a `sim` action, or help."""
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
        elif words[0] == "wait":
            await wait(words[1:])
        elif words[0] == "home":
            await self.home()
        else:
            print("Type a slash command (/kai help), click LABEL, sim, wait 10s, home, or quit.")

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
                print(f"No button labelled {label!r} in the last reply or in an alert.")
                return
            message, ts = alert
            reply = await self.stack.click(label, message, channel_id=ALERT_CHANNEL, message_ts=ts)
            await self.show(reply)
        except LookupError as e:
            print(e)

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
        await session.execute(line)


def _has_button(message: Mapping[str, Any], label: str) -> bool:
    try:
        find_button(message, label)
    except LookupError:
        return False
    return True


async def wait(args: Sequence[str]) -> None:
    """`wait 10s`: let the service run (alerts fire after `alerts.hold`)."""
    try:
        span = durations.parse_duration(args[0] if args else "")
    except ValueError as e:
        print(f"wait DURATION, like wait 10s: {e}")
        return
    print(f"(waiting {durations.format_duration(span)})")
    await asyncio.sleep(span.total_seconds())


def run_sim_action(stack: Stack, args: Sequence[str]) -> str:
    described = breakage.describe_actions()
    if not args or args[0] not in breakage.ACTIONS:
        listing = "\n".join(f"  sim {name:<22} {doc}" for name, doc in described.items())
        return f"Simulator actions:\n{listing}"
    breakage.ACTIONS[args[0]](stack.sim)
    return f"simulator: {described[args[0]]}"


def reply_as_text(message: Mapping[str, Any]) -> str:
    """A Block Kit message as a terminal would show it."""
    lines = [f"({message.get('response_type', 'ephemeral')})"]
    for block in message.get("blocks") or []:
        lines += block_lines(block)
    return "\n".join(lines) if len(lines) > 1 else str(message.get("text", ""))


def block_lines(block: Mapping[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "header":
        return ["", f"== {block['text']['text']} =="]
    if kind == "context":
        return ["   " + " ".join(e.get("text", "") for e in block.get("elements", []))]
    if kind == "section" and "text" in block:
        return [mrkdwn_as_text(block["text"]["text"])]
    if kind == "actions":
        return ["   [" + "] [".join(e["text"]["text"] for e in block.get("elements", [])) + "]"]
    return []


def mrkdwn_as_text(text: str) -> str:
    lines = []
    in_code = False
    for raw in html.unescape(text).split("\n"):
        parts = raw.split("```")
        for index, part in enumerate(parts):
            if index:
                in_code = not in_code
            if part or index == 0:
                lines.append(("    " if in_code else "") + part)
    return "\n".join(line for line in lines if line.strip() or not in_code)
