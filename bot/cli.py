"""The `kai-chatops` command line (docs/design.md §1.1): serve, check, evaluate, demo.

Composition root: reads the config and environment, builds gateways, runs a use-case, prints.
Exit codes: 0 fine, 1 not healthy (`check`), 2 could not do it (bad config, input or cluster).

Each command imports what it needs when it runs, not at the top: the service's libraries
(`kubernetes`, aiohttp, Slack's SDK and Bolt) take about a second to import, and `--help`,
`--version` and the offline `evaluate` must answer as fast as `kubectl` does
(tests/unit/test_cli_imports.py keeps those libraries out of them; bench/startup.py times them).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import bot
from bot.core import errors

if TYPE_CHECKING:
    from bot.core.models import HealthReport, RawObject, Verdict

EXIT_OK, EXIT_UNHEALTHY, EXIT_ERROR = 0, 1, 2
SECRET_VARIABLES = (
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "PAGERDUTY_ROUTING_KEY",
)


class VersionAction(argparse.Action):
    """`--version`, which reads the installed version only when asked: reading it loads
    `importlib.metadata`, a fifth of what `--help` would otherwise import."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version"
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {bot.version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kai-chatops",
        description="Slack ChatOps for GPU clusters on KAI Scheduler, KEDA and GitOps.",
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser(
        "serve", help="run the service (Slack listener, /healthz /readyz /metrics)"
    )
    serve.add_argument("--config", required=True, metavar="PATH", help="the YAML configuration")
    serve.add_argument("--port", type=int, default=3000, help="listening port (default 3000)")
    serve.add_argument("--host", default="0.0.0.0", help="listening address (default 0.0.0.0)")
    serve.add_argument(
        "--log-format", choices=["text", "json"], default="text", help="json in a cluster"
    )
    check = sub.add_parser("check", help="one-shot KAI and APIService health report of a cluster")
    check.add_argument("--config", required=True, metavar="PATH", help="the YAML configuration")
    check.add_argument("--cluster", metavar="NAME", help="cluster name (default: the first)")
    check.add_argument("--output", choices=["text", "json"], default="text")
    check.add_argument(
        "--verbose", action="store_true", help="also log each retry of an API request"
    )
    evaluate = sub.add_parser("evaluate", help="offline verdicts for objects in YAML/JSON dumps")
    evaluate.add_argument("files", nargs="+", metavar="FILE", help="a file, or - for stdin")
    evaluate.add_argument("--output", choices=["text", "json"], default="text")
    evaluate.add_argument(
        "--strict", action="store_true", help="exit 1 when any object is not Healthy (CI gates)"
    )
    demo = sub.add_parser("demo", help="the whole service against a simulated cluster and Slack")
    demo.add_argument("--run", action="append", metavar="COMMAND", help="run a command and exit")
    demo.add_argument(
        "--fleet",
        type=int,
        default=0,
        metavar="N",
        help="N clusters (the simulated one under N names) with alerts.group_clusters N",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `kai-chatops` console script."""
    args = build_parser().parse_args(argv)
    from bot.service import logs  # after parsing: --help and --version need no logging

    secrets = [os.environ.get(name, "") for name in SECRET_VARIABLES]
    logs.configure(getattr(args, "log_format", "text"), secrets, _log_level(args))
    as_json = getattr(args, "output", "text") == "json" and args.command == "check"
    try:
        if args.command == "serve":
            # No cyclic collection until the service is up (`Service.run_until_signalled`
            # turns it back on): start-up builds some 80 000 objects that live as long as the
            # process, and the 200 collections they set off, a tenth of the time to readiness
            # (bench/startup.py), found under 2 000 objects of garbage.
            gc.disable()
            # Before any thread starts (`bot.service.memory`): freed memory goes back sooner.
            from bot.service.memory import limit_arenas

            limit_arenas()
            # uvloop's event loop (libuv) spends less per request and per task than asyncio's
            # own, which keeps acks fast when many commands arrive at once (bench/ack_latency).
            import uvloop

            return uvloop.run(serve(args.config, args.host, args.port))
        if args.command == "check":
            import asyncio

            return asyncio.run(check(args.config, args.cluster, args.output))
        if args.command == "evaluate":
            return evaluate(args.files, args.output, strict=args.strict)
        return run_demo_command(args.run or [], fleet=args.fleet)
    except errors.ConfigError as e:
        print("invalid configuration:", *e.problems, sep="\n  ", file=sys.stderr)
        if as_json:
            print(json.dumps({"error": "invalid configuration", "problems": e.problems}))
        return EXIT_ERROR
    except errors.BotError as e:
        print(f"kai-chatops: {e}", file=sys.stderr)
        if as_json:
            print(json.dumps({"error": str(e)}))
        return EXIT_ERROR


def run_demo_command(steps: Sequence[str], *, fleet: int = 0) -> int:
    """`kai-chatops demo`: the test bed is loaded only here, and only when it is installed."""
    try:
        import testbed.demo
    except ModuleNotFoundError as e:
        if e.name is None or not e.name.startswith("testbed"):
            raise
        print(
            "kai-chatops: the demo needs the test bed (the `testbed` package), which this install"
            " leaves out (the container image does); run it from a clone: make demo",
            file=sys.stderr,
        )
        return EXIT_ERROR
    import asyncio

    return asyncio.run(testbed.demo.run(steps, fleet=fleet))


def _log_level(args: argparse.Namespace) -> int:
    """`check` keeps the gateway's retry warnings out of the terminal unless `--verbose`: the
    one line that matters is the result or the final error."""
    if args.command != "check":
        return logging.INFO
    return logging.INFO if args.verbose else logging.ERROR


async def serve(config_path: str, host: str, port: int) -> int:
    from bot.changes.approvers import check_approvers
    from bot.config.settings import load_settings
    from bot.integrations.pagerduty.events import PagerDutyEnv
    from bot.service.deps import SlackEnv, build_deps
    from bot.service.server import Service

    settings = load_settings(config_path)
    env = SlackEnv.from_environ(os.environ)
    pagerduty = PagerDutyEnv.from_environ(os.environ) if settings.pagerduty else None
    deps = build_deps(settings, env, pagerduty=pagerduty)
    try:
        await check_approvers(deps)  # a ConfigError: exit 2, as for any invalid configuration
    except errors.ConfigError:
        deps.close()
        raise
    service = Service(deps, env, host=host, port=port)
    await service.run_until_signalled()
    return EXIT_OK


async def check(config_path: str, cluster: str | None, output: str) -> int:
    from datetime import UTC, datetime

    from bot.config.settings import load_settings
    from bot.health.render import report_text
    from bot.health.usecase import check_health
    from bot.kube.gateway import connect

    settings = load_settings(config_path)
    gateway = connect(settings.cluster(cluster), settings.kubernetes)
    try:
        report = await check_health(gateway, settings, datetime.now(UTC))
    finally:
        gateway.close()
    print(json.dumps(report_json(report)) if output == "json" else report_text(report))
    return EXIT_OK if report.verdict.is_healthy else EXIT_UNHEALTHY


def report_json(report: HealthReport) -> dict[str, object]:
    return {
        "cluster": report.cluster,
        "health": report.verdict.value,
        "checked_at": report.checked_at.isoformat(),
        "findings": [
            {
                "subject": f.subject,
                "health": f.health.value,
                "summary": f.summary,
                "detail": f.detail,
            }
            for f in report.findings
        ],
    }


def evaluate(files: Sequence[str], output: str, *, strict: bool = False) -> int:
    """Print a verdict per object; with `strict`, exit 1 when any is not Healthy.

    Raises:
        UserError: a file cannot be read, is not UTF-8, or is not YAML/JSON objects (exit 2).
    """
    from bot.kube import manifests  # YAML and JSON only: no cluster, no client

    objects = []
    for path in files:
        source = "stdin" if path == "-" else path
        objects += manifests.parse_documents(
            manifests.decode_text(read_input(path), source), source
        )
    if not objects:
        print(f"no objects in {', '.join(files)}", file=sys.stderr if output == "json" else None)
        return EXIT_OK
    verdicts = [evaluate_any(obj) for obj in objects]
    for verdict in verdicts:
        print(json.dumps(verdict.as_json()) if output == "json" else verdict_text(verdict))
    if strict and not all(v.health.is_healthy for v in verdicts):
        return EXIT_UNHEALTHY
    return EXIT_OK


def evaluate_any(obj: RawObject) -> Verdict:
    """`bot.rules` for what they know; a Deployment judged as `check` judges KAI's (KAI's
    `isControllerAvailable`, `bot.health.deployments`)."""
    from bot import rules
    from bot.core import conditions
    from bot.health import deployments

    is_deployment = isinstance(obj, dict) and obj.get("kind") == "Deployment"
    if is_deployment and obj.get("apiVersion") == "apps/v1" and conditions.object_name(obj):
        return conditions.make_verdict(obj, deployments.assess_deployment(obj))
    return rules.evaluate_object(obj)


def read_input(path: str) -> bytes:
    """The bytes of `path`, or of stdin for "-": decoding is the parser's, so a file and stdin
    that are not UTF-8 get the same message whatever the terminal's locale."""
    name = "stdin" if path == "-" else path
    try:
        if path != "-":
            with open(path, "rb") as f:
                return f.read()
        if sys.stdin is None:  # started with stdin closed (`<&-`)
            raise errors.UserError("cannot read stdin: it is closed")
        return sys.stdin.buffer.read()
    except OSError as e:
        raise errors.UserError(f"cannot read {name}: {e.strerror or e}") from e


def verdict_text(verdict: Verdict) -> str:
    """`Kind ns/name: Health: message`, leaving out what the object does not say."""
    where = f"{verdict.namespace}/{verdict.name}" if verdict.namespace else verdict.name
    lines = verdict.message.strip("\n").splitlines() or [""]
    subject = " ".join(part for part in (verdict.kind, where) if part)
    head = ": ".join(part for part in (subject, verdict.health.value, lines[0]) if part)
    return "\n".join([head, *(f"    {line}" for line in lines[1:])])
