"""Where each kind lives and the command a not-found hint offers (`bot.listing.places`): the
family's verb for the one the user typed, the short KIND word, `--cluster` off the default."""

from __future__ import annotations

import pytest

from bot.config.settings import parse_settings
from bot.core import errors
from bot.listing import places
from bot.listing.commands import ListObjects
from bot.listing.model import Found
from bot.subcommands import GRAMMAR

SETTINGS = parse_settings(
    {
        "clusters": [{"name": "prod"}, {"name": "lab"}],
        "slack": {"alert_channel": "C0ALERTS"},
        "keda": {"namespaces": ["annia", "bob"]},
    }
)


@pytest.mark.parametrize(
    ("found", "typed", "command"),
    [
        (Found("HelmRelease", "apps", "x"), "reconcile", "/kai reconcile hr apps/x"),
        (Found("HelmRelease", "apps", "x"), "pause", "/kai suspend hr apps/x"),
        (Found("Kustomization", "apps", "x"), "sync", "/kai reconcile ks apps/x"),
        (Found("ScaledJob", "annia", "x"), "suspend", "/kai pause annia/x"),
        (Found("ScaledObject", "annia", "x"), "resume", "/kai resume scaledobject annia/x"),
        (Found("ScaledJob", "annia", "x"), "reconcile", "/kai pause annia/x"),
        (Found("Application", "argocd", "x"), "sync", "/kai sync argocd/x"),
        (Found("Application", "argocd", "x"), "pause", "/kai reconcile app argocd/x"),
    ],
    ids=lambda x: x if isinstance(x, str) else f"{x.kind}",
)
def test_a_suggestion_uses_the_verb_typed_where_the_kind_has_it(
    found: Found, typed: str, command: str
) -> None:
    assert places.command_for(found, typed, "/kai") == command


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("reconcile hr apps/x", "reconcile"),
        ("sync argocd/x", "sync"),
        ("pause annia/x for 2h", "pause"),
        ("resume annia/x", "resume"),
        ("suspend hr apps/x", "suspend"),
        ("resume hr apps/x", "resume"),
        ("health", ""),
    ],
)
def test_the_verb_is_the_one_typed(text: str, verb: str) -> None:
    assert places.verb_of(GRAMMAR.parse(text)) == verb


def test_a_kind_without_a_namespace_is_read_where_it_lives() -> None:
    assert places.home_namespaces(ListObjects("HelmRelease"), SETTINGS) == ["flux-system"]
    assert places.home_namespaces(ListObjects("Application"), SETTINGS) == ["argocd"]
    assert places.home_namespaces(ListObjects("ScaledJob"), SETTINGS) == ["annia", "bob"]
    assert places.home_namespaces(ListObjects("ScaledJob", "ops"), SETTINGS) == ["ops"]


def test_a_keda_kind_with_no_namespace_anywhere_asks_for_one() -> None:
    bare = parse_settings({"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0A"}})
    with pytest.raises(errors.UserError, match=r"keda\.namespaces is empty"):
        places.home_namespaces(ListObjects("ScaledObject"), bare)


def test_a_suggestion_names_the_cluster_only_off_the_default_one() -> None:
    assert places.cluster_suffix(None, SETTINGS) == ""
    assert places.cluster_suffix("prod", SETTINGS) == ""
    assert places.cluster_suffix("lab", SETTINGS) == " --cluster lab"
