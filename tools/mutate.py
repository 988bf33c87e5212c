"""`make mutate`: mutation testing with mutmut, kill rate per module: the security edges and the
alert state, and the newer features (diagnostics, workloads, Home tab, Flux suspend, listing).

Each group runs in a copy of the project (mutmut writes its mutants beside the code), against
only the test files that are about it, so a run stays minutes on two cores. Goal: >= 90 % killed
per module of the security edges and the alert state, >= 85 % per module of the features (issue
23). Prints one line per module, then the survivors with `--survivors`; docs/mutation.md says
why each kind of survivor is harmless.

    python tools/mutate.py [--survivors] [--group NAME]...
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 90.0
FEATURE_GOAL = 85.0
KILLED = {"killed", "timeout"}
NOT_COUNTED = {"skipped", "not checked"}


@dataclass(frozen=True)
class Group:
    """Modules mutated together, and the tests that are about them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]
    goal: float = GOAL  # per cent of mutants killed, per module


PINS = "tests/e2e/test_security_pins.py"
GROUPS = {
    "access": Group(
        ("bot/access/policy.py", "bot/access/confirmations.py", "bot/access/audit.py"),
        (
            "tests/unit/test_access_policy.py",
            "tests/unit/test_access_confirmations.py",
            "tests/unit/test_access_audit.py",
            "tests/unit/test_access_audit_journal.py",
            f"{PINS}::test_pin_a_user_group_id_is_a_group_entry_and_grants_its_members",
            f"{PINS}::test_pin_a_confirmation_expires_at_five_minutes_sharp",
        ),
    ),
    "replay": Group(
        ("bot/access/once.py", "bot/access/grouped.py", "bot/service/signing.py"),
        ("tests/e2e/test_access_once.py", "tests/unit/test_service_signing.py"),
    ),
    "acks-first": Group(("bot/service/inflight.py",), ("tests/unit/test_service_inflight.py",)),
    # Issue 37: the scheduler stall alert's rules and signs, and when a reminder falls due.
    "stall": Group(
        ("bot/alerts/stall.py", "bot/alerts/stall_signs.py"),
        ("tests/unit/test_alerts_stall.py",),
    ),
    "reminders": Group(("bot/alerts/reminders.py",), ("tests/unit/test_alerts_reminders.py",)),
    "escaping": Group(
        ("bot/slack/blocks.py", "bot/core/rich.py"),
        (
            "tests/unit/test_slack_blocks.py",
            "tests/unit/test_render_hostile.py",
            "tests/unit/test_render_limits.py",
            "tests/unit/test_home_render.py",
            "tests/unit/test_core_rich.py",
        ),
    ),
    "redaction": Group(
        ("bot/core/redaction.py", "bot/service/logs.py"),
        (
            "tests/unit/test_core_redaction.py",
            "tests/unit/test_diagnostics_pods.py",
            "tests/unit/test_logs.py",
        ),
    ),
    # Issue 36: approvals bounded apart from the replay memory, the requester checked again,
    # impersonation headers checked before sending, HTTP mode's header bound and cap.
    "approvals": Group(
        ("bot/access/approval_room.py", "bot/access/approval_store.py", "bot/access/approvals.py"),
        (
            "tests/unit/test_access_approval_room.py",
            "tests/unit/test_access_approvals.py",
            "tests/e2e/test_access_approval_store.py",
        ),
    ),
    "impersonation": Group(
        ("bot/access/identity.py", "bot/kube/identity.py"),
        ("tests/unit/test_impersonation.py",),
    ),
    "http-limits": Group(
        ("bot/service/listener.py",),
        ("tests/unit/test_service_listener.py", "tests/e2e/test_e2e_http_limits.py"),
    ),
    "lease": Group(
        ("bot/alerts/lease.py",),
        (
            "tests/e2e/test_lease_election.py",
            "tests/e2e/test_lease_holder.py",
            "tests/e2e/test_e2e_lease.py",
            "tests/unit/test_schedule_jobs.py",
            f"{PINS}::test_pin_a_holder_renewing_on_schedule_never_stops_being_the_leader",
        ),
    ),
    "state": Group(
        ("bot/state/retry.py", "bot/state/sqlite.py", "bot/state/configmap.py"),
        (
            "tests/unit/test_state_retry.py",
            "tests/unit/test_state_sqlite.py",
            "tests/e2e/test_state_configmap.py",
            "tests/e2e/test_alert_store_versions.py",
            "tests/e2e/test_alert_store.py",
            "tests/e2e/test_access_once.py",
            "tests/unit/test_access_audit_journal.py",
        ),
    ),
    "alert-state": Group(
        (
            "bot/alerts/machine.py",
            "bot/alerts/model.py",
            "bot/alerts/store.py",
            "bot/alerts/outbox.py",
            "bot/alerts/document.py",
            "bot/alerts/trouble.py",
        ),
        (
            "tests/unit/test_alerts_machine.py",
            "tests/unit/test_alerts_outbox.py",
            "tests/unit/test_alerts_thread_replies.py",
            "tests/unit/test_alerts_outbox_order.py",
            "tests/unit/test_alerts_document.py",
            "tests/e2e/test_alert_store_versions.py",
            "tests/e2e/test_alert_store.py",
            "tests/e2e/test_alert_ops.py",
            "tests/unit/test_alerts_render.py",
            f"{PINS}::test_pin_the_lease_is_asked_about_after_the_read_not_before",
        ),
    ),
    # Issue 23: the newer features, each against its unit tables (seconds a mutant).
    "diagnostics": Group(
        (
            "bot/diagnostics/selectors.py",
            "bot/diagnostics/evidence.py",
            "bot/diagnostics/pods.py",
            "bot/diagnostics/cause.py",
            "bot/diagnostics/subjects.py",
        ),
        (
            "tests/unit/test_diagnostics_pods.py",
            "tests/unit/test_diagnostics_cause.py",
            "tests/unit/test_diagnostics_evidence.py",
            "tests/unit/test_diagnostics_containers.py",
        ),
        goal=FEATURE_GOAL,
    ),
    "workloads": Group(
        (
            "bot/workloads/quantities.py",
            "bot/workloads/queues.py",
            "bot/workloads/pending.py",
            "bot/workloads/reasons.py",
            "bot/workloads/why.py",
        ),
        ("tests/unit/test_workloads_reasons.py", "tests/unit/test_workloads_why.py"),
        goal=FEATURE_GOAL,
    ),
    "home": Group(
        ("bot/home/assemble.py", "bot/home/usecase.py", "bot/home/render.py"),
        (
            "tests/unit/test_home_render.py",
            "tests/unit/test_home_held.py",
            "tests/unit/test_home_lines.py",
            "tests/unit/test_home_usecase.py",
        ),
        goal=FEATURE_GOAL,
    ),
    "gitops-suspend": Group(
        ("bot/gitops/suspend.py",),
        ("tests/unit/test_gitops_suspend.py",),
        goal=FEATURE_GOAL,
    ),
    "listing": Group(
        (
            "bot/listing/order.py",
            "bot/listing/places.py",
            "bot/listing/usecase.py",
            "bot/listing/render.py",
        ),
        ("tests/unit/test_listing.py", "tests/unit/test_listing_places.py"),
        goal=FEATURE_GOAL,
    ),
    # Issue 37: GPU nodes (rules, cordon plans, the alert's and the replies' words).
    "nodes": Group(
        (
            "bot/nodes/gpus.py",
            "bot/nodes/cordon.py",
            "bot/nodes/render.py",
            "bot/nodes/render_cordon.py",
            "bot/alerts/gpu_nodes.py",
        ),
        (
            "tests/unit/test_nodes_gpus.py",
            "tests/unit/test_nodes_cordon.py",
            "tests/unit/test_alerts_gpu_nodes.py",
            "tests/unit/test_nodes_words.py",
        ),
    ),
}


def mutmut_config(group: Group) -> str:
    def toml_list(items: tuple[str, ...]) -> str:
        return "[" + ", ".join(f'"{item}"' for item in items) + "]"

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["bot/", "handlers/"]\n'
        f"only_mutate = {toml_list(group.modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(group.tests)}\n"
    )


def run_group(group: Group, workdir: Path) -> dict[str, str]:
    """Mutant name -> status, for one group run in a copy of the project under `workdir`."""
    for part in ("bot", "handlers", "tests"):
        shutil.copytree(ROOT / part, workdir / part, ignore=shutil.ignore_patterns("__pycache__"))
    pyproject = (ROOT / "pyproject.toml").read_text()
    (workdir / "pyproject.toml").write_text(pyproject + mutmut_config(group))
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    subprocess.run(
        [mutmut, "run", "--max-children", "2"],
        cwd=workdir,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    listed = subprocess.run(
        [mutmut, "results", "--all", "true"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r"^\s*([\w.]+__mutmut_\d+): (.+)$", listed.stdout, re.MULTILINE)
    return dict(found)


def change_of(mutant: str, workdir: Path) -> str:
    """The mutation, as the lines it removed and added: the mutant's function beside the
    original in the file mutmut wrote (`mutants/`), diffed here; `mutmut show` starts a
    process per mutant, seconds each on a busy machine."""
    module, _, function = mutant.rpartition(".")
    source = (workdir / "mutants" / (module.replace(".", "/") + ".py")).read_text()
    mangled = function.rsplit("__mutmut_", 1)[0]  # x_name, or xǁClassǁname for a method
    original, name = mangled + "__mutmut_orig", mangled.split("ǁ")[-1].removeprefix("x_")
    bodies = {
        node.name: (ast.get_source_segment(source, node) or "").replace(node.name, name)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name in (function, original)
    }
    before, after = (bodies.get(key, "").splitlines() for key in (original, function))
    lines = difflib.ndiff(before, after)
    changed = [line for line in lines if line[:2] in ("- ", "+ ")]
    return "\n".join(f"          {line[:2]}{line[2:].strip()}" for line in changed)


def report(results: dict[str, str], group: Group, survivors: bool, workdir: Path) -> bool:
    """Print each module's kill rate; whether every module reached the group's goal."""
    reached = True
    modules = group.modules
    for module in modules:
        statuses = Counter(
            status
            for name, status in results.items()
            if _module_path(name, modules) == module and status not in NOT_COUNTED
        )
        total = sum(statuses.values())
        killed = sum(statuses[s] for s in KILLED)
        rate = 100.0 * killed / total if total else 100.0
        reached &= rate >= group.goal
        mark = "ok " if rate >= group.goal else "LOW"
        print(f"{mark} {module:32} {killed:4d}/{total:<4d} killed  {rate:5.1f} %", flush=True)
        if survivors:
            for name, status in sorted(results.items()):
                if _module_path(name, modules) == module and status not in KILLED | NOT_COUNTED:
                    print(f"      {status:10} {name}\n{change_of(name, workdir)}")
    return reached


def _module_path(mutant: str, modules: tuple[str, ...]) -> str:
    dotted = mutant.split("__mutmut_")[0]
    for module in modules:
        if dotted.startswith(module.removesuffix(".py").replace("/", ".") + "."):
            return module
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survivors", action="store_true", help="list the surviving mutants")
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="only these")
    args = parser.parse_args()
    reached = True
    for name in args.group or list(GROUPS):
        group = GROUPS[name]
        print(f"== {name}: {', '.join(group.modules)}", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"mutate-{name}-") as workdir:
            results = run_group(group, Path(workdir))
            reached &= report(results, group, args.survivors, Path(workdir))
    goals = f"{GOAL:.0f} % (security edges, alert state), {FEATURE_GOAL:.0f} % (features)"
    print(f"goal: at least {goals} killed per module: {'met' if reached else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
