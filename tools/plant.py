"""`make plant`: plant each known delivery bug once and check that the soak and a test catch it.

Each plant is one exact text change in the product (a fence removed, a look skipped). For each,
a copy of the project gets the change, then the delivery tests (`SUITE`) and the plant's soak
seeds run against it; the plant is caught when both fail. Prints one line per plant: the tests
that failed, and the first problem the soak reported (the invariant that caught it).
docs/mutation.md keeps the table.

    python tools/plant.py [--only NAME]... [--incidents N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = (
    "tests/unit/test_alerts_outbox.py",
    "tests/unit/test_alerts_outbox_order.py",
    "tests/unit/test_alerts_converge_rules.py",
    "tests/e2e/test_alert_ops.py",
    "tests/e2e/test_alert_fencing.py",
    "tests/e2e/test_e2e_alert_delivery.py",
    "tests/e2e/test_e2e_delivery_converge.py",
    "tests/e2e/test_e2e_lease.py",
    "tests/e2e/test_alert_soak.py",
)


@dataclass(frozen=True)
class Plant:
    """One bug: where, the text it replaces, and the soak seeds that must catch it."""

    name: str
    path: str
    old: str
    new: str
    seeds: str = "1-10"


PLANTS = (
    Plant(
        "skip the look before re-sending",
        "bot/alerts/drain.py",
        "        if owed.was_attempted:\n            copies",
        "        if False:\n            copies",
    ),
    Plant(
        "drop the compare-and-set on the attempt ID",
        "bot/alerts/outbox.py",
        "        if entry.attempt != attempt:\n            return state, Confirmation.CONTESTED",
        "        if False:\n            return state, Confirmation.CONTESTED",
    ),
    Plant(
        "don't delete a superseded copy",
        "bot/alerts/drain.py",
        "            await self._converger.delete(channel, [sent.ts])",
        "            pass",
    ),
    Plant(
        "no closing sweep",
        "bot/alerts/machine.py",
        "        resolved = outbox.owe(resolved, EffectKind.SWEEP)",
        "        resolved = resolved",
    ),
    Plant(
        "no holder re-check before sending",
        "bot/alerts/drain.py",
        "        if not poster.is_holder():\n            return Progress.RETRY",
        "        if False:\n            return Progress.RETRY",
    ),
    Plant(
        "skip the sweep after a contested record",
        "bot/alerts/drain.py",
        "            if not await self._delete_other_copies(owed, kept):",
        "            if False:",
    ),
    Plant(
        "a search stops after its first page",
        "bot/slack/gateway.py",
        "            if not cursor:\n                return found",
        "            if True:\n                return found",
    ),
    Plant(
        "an attempt anchored on the host's clock",
        "bot/alerts/drain.py",
        "        anchor = await self._messages.anchor(channel)",
        '        anchor = f"{poster.clock().timestamp():.6f}"',
    ),
    Plant(
        "a look that failed counts as absent",
        "bot/alerts/delivery.py",
        '"cannot look for alert messages in Slack: %s", e)\n            return None',
        '"cannot look for alert messages in Slack: %s", e)\n            return {}',
    ),
    Plant(
        "a command redone applies twice",
        "bot/alerts/machine.py",
        "    if alert is not None and command_id in alert.commands:",
        "    if False:",
    ),
    Plant(
        "the root's edit is never re-applied",
        "bot/alerts/converge.py",
        "        if kept.shown == await self._messages.root_shown(alert):",
        "        if True:",
    ),
    Plant(
        "a root that may still land is posted again at once",
        "bot/alerts/drain.py",
        "            if owed.kind is EffectKind.ROOT and not self._waited_out(cluster, owed):",
        "            if False:",
    ),
    Plant(
        "no convergence after a takeover",
        "bot/alerts/drain.py",
        "        if memory.term != term:",
        "        if False:",
    ),
    Plant(
        "calls outlive the right to act",
        "bot/alerts/drain.py",
        "        return self._poster.acting_left()",
        "        return None",
    ),
)


def copy_project(into: Path) -> None:
    """The tracked files of the project (and any not yet committed), without .venv."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def apply(plant: Plant, into: Path) -> None:
    path = into / plant.path
    text = path.read_text()
    if text.count(plant.old) != 1:
        raise SystemExit(f"plant {plant.name!r}: its text is not found once in {plant.path}")
    path.write_text(text.replace(plant.old, plant.new))


def run(args: list[str], where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{where}{os.pathsep}{where / 'tests'}"}
    return subprocess.run(args, cwd=where, env=env, capture_output=True, text=True)


def first_problem(output: str) -> str:
    lines = [line.strip() for line in output.splitlines()]
    problems = [line for line in lines if line.startswith("seed ")]
    summary = next((line for line in lines if line.startswith("seeds ")), "")
    return problems[0] if problems else summary.split(";")[-1].strip()


def judge(plant: Plant, incidents: int) -> str:
    with tempfile.TemporaryDirectory(prefix="plant-") as tmp:
        where = Path(tmp)
        copy_project(where)
        apply(plant, where)
        python = str(ROOT / ".venv" / "bin" / "python")
        found = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITE], where)
        failed = [
            line.split()[1] for line in found.stdout.splitlines() if line.startswith("FAILED")
        ]
        tests = f"caught by {', '.join(failed)}" if failed else "SURVIVED"
        soak = run(
            [
                python,
                "tests/alert_soak.py",
                "--seeds",
                plant.seeds,
                "--incidents",
                str(incidents),
                "--log",
                str(where / "soak.log"),
            ],
            where,
        )
        verdict = f"caught ({first_problem(soak.stdout)})" if soak.returncode else "SURVIVED"
        return f"{plant.name}: tests {tests}; soak seeds {plant.seeds}: {verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a plant's name (repeatable)")
    parser.add_argument("--incidents", type=int, default=4, help="soak incidents per seed")
    args = parser.parse_args()
    chosen = [p for p in PLANTS if not args.only or p.name in args.only]
    lines = []
    for plant in chosen:
        lines.append(judge(plant, args.incidents))
        print(lines[-1], flush=True)
    sys.exit(1 if any("SURVIVED" in line for line in lines) else 0)


if __name__ == "__main__":
    main()
