"""The slash command's grammar (docs/design.md §1.3): what each text means, and what a bad one is
told."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.alerts.commands import Ack, Alerts, Silence, Unsilence
from bot.commands.grammar import Command
from bot.commands.kinds import ReconcilableKind
from bot.commands.registry import Help
from bot.core import errors
from bot.gitops.commands import FluxResume, Reconcile, ReconcileShortcut, Suspend, Sync
from bot.health.commands import CheckHealth
from bot.keda.commands import Pause, Resume, ScaledJobs
from bot.subcommands import GRAMMAR

H = timedelta(hours=1)
KIND_WORDS: list[tuple[str, ReconcilableKind]] = [
    ("helmrelease", "HelmRelease"),
    ("hr", "HelmRelease"),
    ("HelmRelease", "HelmRelease"),
    ("kustomization", "Kustomization"),
    ("ks", "Kustomization"),
    ("gitrepository", "GitRepository"),
    ("gitrepo", "GitRepository"),
    ("helmrepository", "HelmRepository"),
    ("helmrepo", "HelmRepository"),
    ("ocirepository", "OCIRepository"),
    ("OCIRepo", "OCIRepository"),
    ("application", "Application"),
    ("app", "Application"),
]
GOOD = [
    ("", Help(None)),
    ("   ", Help(None)),
    ("help", Help(None)),
    ("help pause", Help("pause")),
    ("HELP Reconcile", Help("reconcile")),
    ("pause --help", Help("pause")),
    ("--help", Help(None)),
    ("health", CheckHealth()),
    ("Health", CheckHealth()),
    ("scaledjobs", ScaledJobs(None, False)),
    ("scaledjobs annia", ScaledJobs("annia", False)),
    ("scaledjobs --all-namespaces", ScaledJobs(None, True)),
    ("scaledjobs -A", ScaledJobs(None, True)),
    (
        "pause annia/annia-worker for 2h node drain",
        Pause("ScaledJob", "annia", "annia-worker", 2 * H, "node drain"),
    ),
    ("pause annia/annia-worker", Pause("ScaledJob", "annia", "annia-worker", None, "")),
    (
        "pause annia/annia-worker GPU node drain",
        Pause("ScaledJob", "annia", "annia-worker", None, "GPU node drain"),
    ),
    ("pause annia/w FOR 1h30m", Pause("ScaledJob", "annia", "w", 1.5 * H, "")),
    (
        "pause scaledobject annia/annia-api for 1d upgrade",
        Pause("ScaledObject", "annia", "annia-api", 24 * H, "upgrade"),
    ),
    ("pause ScaledJob annia/w", Pause("ScaledJob", "annia", "w", None, "")),
    ("pause annia/w.v2 for 30m", Pause("ScaledJob", "annia", "w.v2", H / 2, "")),
    (
        "pause annia/w for 2h \u201cnode drain, see INC-42\u201d",
        Pause("ScaledJob", "annia", "w", 2 * H, "node drain, see INC-42"),
    ),
    ("  pause \u00a0 annia/w   for  2h  drain  ", Pause("ScaledJob", "annia", "w", 2 * H, "drain")),
    ("resume annia/annia-worker", Resume("ScaledJob", "annia", "annia-worker")),
    ("resume scaledobject annia/annia-api", Resume("ScaledObject", "annia", "annia-api")),
    # The KEDA words `list` takes work in pause and resume too (issue 38).
    ("pause sj annia/w for 2h drain", Pause("ScaledJob", "annia", "w", 2 * H, "drain")),
    ("pause SO annia/annia-api", Pause("ScaledObject", "annia", "annia-api", None, "")),
    ("resume sj annia/w", Resume("ScaledJob", "annia", "w")),
    ("resume so annia/annia-api", Resume("ScaledObject", "annia", "annia-api")),
    *[
        (f"reconcile {word} flux-system/kai", Reconcile(kind, "flux-system", "kai"))
        for word, kind in KIND_WORDS
    ],
    (
        "reconcile hr flux-system/kai --with-source",
        Reconcile("HelmRelease", "flux-system", "kai", with_source=True),
    ),
    (
        "reconcile ks --with-source flux-system/apps",
        Reconcile("Kustomization", "flux-system", "apps", with_source=True),
    ),
    ("reconcile app argocd/kai --hard", Reconcile("Application", "argocd", "kai", hard=True)),
    ("reconcile hr a/b --force", Reconcile("HelmRelease", "a", "b", force=True)),
    ("reconcile helmrelease a/b --reset", Reconcile("HelmRelease", "a", "b", reset=True)),
    (
        "reconcile hr a/b --force --reset",
        Reconcile("HelmRelease", "a", "b", force=True, reset=True),
    ),
    ("reconcile kai --force", ReconcileShortcut("kai", force=True)),
    ("reconcile kai", ReconcileShortcut("kai")),
    ("reconcile KEDA --with-source", ReconcileShortcut("keda", with_source=True)),
    ("reconcile keda --hard", ReconcileShortcut("keda", hard=True)),
    ("sync argocd/kai-scheduler", Sync("argocd", "kai-scheduler")),
    *[
        (f"suspend {word} flux-system/kai", Suspend(kind, "flux-system", "kai", None, ""))
        for word, kind in KIND_WORDS
        if kind != "Application"
    ],
    (
        "suspend hr flux-system/kai for 2h hotfix by hand",
        Suspend("HelmRelease", "flux-system", "kai", 2 * H, "hotfix by hand"),
    ),
    (
        "suspend ks flux-system/apps repo migration",
        Suspend("Kustomization", "flux-system", "apps", None, "repo migration"),
    ),
    *[
        (f"resume {word} flux-system/kai", FluxResume(kind, "flux-system", "kai"))
        for word, kind in KIND_WORDS
        if kind != "Application"
    ],
    ("alerts", Alerts()),
    ("ack a1b2c3", Ack("a1b2c3")),
    ("silence a1b2c3 4h upstream outage", Silence("a1b2c3", 4 * H, "upstream outage")),
    ("silence a1b2c3 for 30m", Silence("a1b2c3", H / 2, "")),
    ("unsilence a1b2c3", Unsilence("a1b2c3")),
]


@pytest.mark.parametrize(
    ("text", "expected"), GOOD, ids=[text.strip() or "empty" for text, _ in GOOD]
)
def test_a_good_command_means_what_design_says(text: str, expected: Command) -> None:
    assert GRAMMAR.parse(text) == expected


CLUSTER = [
    ("health --cluster prod", CheckHealth("prod")),
    ("--cluster prod health", CheckHealth("prod")),
    ("health --cluster=staging", CheckHealth("staging")),
    ("help --cluster prod", Help(None, "prod")),
    ("scaledjobs --cluster prod annia", ScaledJobs("annia", False, "prod")),
    (
        "pause annia/w for 2h --cluster prod node drain",
        Pause("ScaledJob", "annia", "w", 2 * H, "node drain", "prod"),
    ),
    (
        "pause annia/w for 2h node drain --cluster prod",
        Pause("ScaledJob", "annia", "w", 2 * H, "node drain", "prod"),
    ),
    ("reconcile --cluster=prod kai", ReconcileShortcut("kai", cluster="prod")),
    ("sync argocd/x --CLUSTER prod", Sync("argocd", "x", "prod")),
    ("silence a1 --cluster prod 1h", Silence("a1", H, "", "prod")),
    ("ack a1 \u2014cluster prod", Ack("a1", "prod")),
    ("unsilence a1 \u2013cluster=prod", Unsilence("a1", "prod")),
    ("alerts --cluster gpu-east-1", Alerts("gpu-east-1")),
    ("resume annia/w --cluster prod", Resume("ScaledJob", "annia", "w", "prod")),
]


@pytest.mark.parametrize(("text", "expected"), CLUSTER, ids=[text for text, _ in CLUSTER])
def test_cluster_is_taken_from_anywhere_in_the_text(text: str, expected: Command) -> None:
    assert GRAMMAR.parse(text) == expected


BAD = [
    ("pause", "pause", "pause needs NAMESPACE/NAME, like annia/annia-worker"),
    ("pause annia-worker", "pause", "'annia-worker' is not NAMESPACE/NAME"),
    ("pause /annia-worker", "pause", "'/annia-worker' is not NAMESPACE/NAME"),
    ("pause Annia/w", "pause", "'Annia' is not a namespace"),
    ("pause annia/Worker_1", "pause", "'Worker_1' is not an object name"),
    ("pause annia/w for", "pause", "pause needs a DURATION, like 30m, 2h, 1d or 1h30m"),
    ("pause annia/w for 2x", "pause", "'2x' is not a duration (expected a duration like 30m"),
    ("pause annia/w for 0m", "pause", "expected a duration like 30m, 2h, 1d or 1h30m"),
    ("pause annia/w for maintenance", "pause", "'maintenance' is not a duration"),
    ("pause annia/w 2h drain", "pause", "to pause for a time, write 'for 2h' before the reason"),
    ("pause annia/w --hard", "pause", "pause does not take --hard"),
    ("resume", "resume", "resume needs NAMESPACE/NAME"),
    ("resume annia/w now", "resume", "unexpected 'now'"),
    ("reconcile", "reconcile", "reconcile needs a KIND and NAMESPACE/NAME, or kai or keda"),
    ("reconcile deployment a/b", "reconcile", "unknown kind 'deployment' (expected one of helm"),
    ("reconcile hr", "reconcile", "reconcile needs NAMESPACE/NAME"),
    ("reconcile hr a/b --hard", "reconcile", "--hard is only for application"),
    ("reconcile ks a/b --hard", "reconcile", "--hard is only for application"),
    ("reconcile app a/b --with-source", "reconcile", "--with-source is only for helmrelease and"),
    ("reconcile gitrepo a/b --with-source", "reconcile", "--with-source is only for helmrelease"),
    ("reconcile ocirepo a/b --with-source", "reconcile", "--with-source is only for helmrelease"),
    ("reconcile kai now", "reconcile", "unexpected 'now'"),
    ("reconcile ks a/b --force", "reconcile", "--force is only for helmrelease"),
    ("reconcile app a/b --reset", "reconcile", "--reset is only for helmrelease"),
    ("reconcile hr a/b --wipe", "reconcile", "reconcile does not take --wipe"),
    ("sync", "sync", "sync needs NAMESPACE/NAME"),
    ("suspend", "suspend", "suspend needs a Flux KIND (helmrelease|hr, kustomization|ks"),
    ("suspend flux-system/kai", "suspend", "suspend needs a Flux KIND (helmrelease|hr"),
    ("suspend deployment a/b", "suspend", "unknown kind 'deployment' (expected one of helm"),
    ("suspend app argocd/kai", "suspend", "suspend is for Flux objects; an Argo CD Application"),
    ("suspend hr a/b 2h drain", "suspend", "to suspend for a time, write 'for 2h' before"),
    ("suspend hr a/b --force", "suspend", "suspend does not take --force"),
    ("resume app argocd/kai", "resume", "resume is for Flux objects"),
    ("resume hr", "resume", "resume needs NAMESPACE/NAME"),
    ("resume hr a/b now", "resume", "unexpected 'now'"),
    ("sync a/b/c", "sync", "'b/c' is not an object name"),
    ("health now", "health", "unexpected 'now'"),
    ("health --cluster", "health", "--cluster needs a NAME, like --cluster prod"),
    ("health --cluster=", "health", "--cluster needs a NAME, like --cluster prod"),
    ("health --cluster a --cluster b", "health", "--cluster is given more than once"),
    ("scaledjobs annia -A", "scaledjobs", "give a NAMESPACE or --all-namespaces, not both"),
    ("scaledjobs Annia", "scaledjobs", "'Annia' is not a namespace"),
    ("scaledjobs annia training", "scaledjobs", "unexpected 'training'"),
    ("alerts all", "alerts", "unexpected 'all'"),
    ("ack", "ack", "ack needs an ALERT_ID"),
    ("ack a1 a2", "ack", "unexpected 'a2'"),
    ("silence", "silence", "silence needs an ALERT_ID and a DURATION"),
    ("silence a1", "silence", "silence needs a DURATION, like 30m, 2h, 1d or 1h30m"),
    ("silence a1 forever", "silence", "'forever' is not a duration"),
    ("unsilence", "unsilence", "unsilence needs an ALERT_ID"),
]


@pytest.mark.parametrize(("text", "sub", "message"), BAD, ids=[text for text, _, _ in BAD])
def test_a_bad_command_says_what_is_wrong_with_that_subcommands_usage(
    text: str, sub: str, message: str
) -> None:
    with pytest.raises(errors.BadCommand) as caught:
        GRAMMAR.parse(text)

    assert message in str(caught.value)
    assert caught.value.usage == GRAMMAR.usage_for(sub)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("deploy everything", "unknown command 'deploy'"),
        ("help bogus", "unknown help topic 'bogus'"),
    ],
    ids=["unknown", "help-topic"],
)
def test_an_unknown_subcommand_gets_the_general_usage(text: str, message: str) -> None:
    with pytest.raises(errors.BadCommand) as caught:
        GRAMMAR.parse(text)

    assert str(caught.value) == message
    assert caught.value.usage == GRAMMAR.usage_for(None)
    assert "/kai pause NAMESPACE/NAME" in caught.value.usage
    assert "/kai unsilence ALERT_ID" in caught.value.usage


@pytest.mark.parametrize(
    ("text", "message", "sub"),
    [
        ("helth", "unknown command 'helth' (did you mean health?)", "health"),
        ("pasue annia/w", "unknown command 'pasue' (did you mean pause?)", "pause"),
        ("help reconcil", "unknown help topic 'reconcil' (did you mean reconcile?)", "reconcile"),
    ],
    ids=["helth", "pasue", "help-topic-typo"],
)
def test_typo_suggests_the_subcommand_and_shows_only_its_usage(
    text: str, message: str, sub: str
) -> None:
    with pytest.raises(errors.BadCommand) as caught:
        GRAMMAR.parse(text)

    assert str(caught.value) == message
    assert caught.value.usage == GRAMMAR.usage_for(sub)
    assert "unsilence" not in caught.value.usage or sub == "unsilence"


def test_usage_uses_the_configured_command_name() -> None:
    with pytest.raises(errors.BadCommand) as caught:
        GRAMMAR.parse("pause", command_name="/gpu")

    assert caught.value.usage.startswith("/gpu pause NAMESPACE/NAME [for DURATION] [REASON...]")
    assert "/kai" not in caught.value.usage


def test_help_lists_every_command_and_who_may_run_it() -> None:
    text = GRAMMAR.help_text("/gpu")

    for sub in GRAMMAR.words:
        assert f"/gpu {sub}: " in text
    viewers, operators = text.split("For operators only (access.operators):")
    assert "/gpu health" in viewers and "/gpu pause" not in viewers
    assert all(
        f"/gpu {sub}:" in operators for sub in ("pause", "resume", "reconcile", "sync", "ack")
    )


def test_help_on_one_topic_shows_its_usage() -> None:
    text = GRAMMAR.help_text("/kai", "sync")

    assert text.startswith("/kai sync: sync an Argo CD Application")
    assert GRAMMAR.usage_for("sync") in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("health", False),
        ("scaledjobs", False),
        ("alerts", False),
        ("help", False),
        ("pause a/b", True),
        ("resume a/b", True),
        ("reconcile kai", True),
        ("sync a/b", True),
        ("suspend hr a/b", True),
        ("resume hr a/b", True),
        ("ack a1", True),
        ("silence a1 1h", True),
        ("unsilence a1", True),
    ],
)
def test_changes_and_alert_actions_need_an_operator(text: str, expected: bool) -> None:
    assert GRAMMAR.needs_operator(GRAMMAR.parse(text)) is expected
