"""The `gitops` section: reconcile shortcuts and the wait, with one line per problem."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from bot.config import settings as config
from bot.core import errors

BASE = {"clusters": [{"name": "prod"}], "slack": {"alert_channel": "C0123"}}


def problems(gitops: Any) -> list[str]:
    with pytest.raises(errors.ConfigError) as refused:
        config.parse_settings({**BASE, "gitops": gitops})
    return refused.value.problems


def test_without_a_gitops_section_there_are_no_shortcuts_and_the_wait_is_five_minutes() -> None:
    gitops = config.parse_settings(BASE).gitops
    assert gitops == config.GitopsSettings(None, None, timedelta(minutes=5))


def test_shortcuts_take_a_kind_word_and_namespace_slash_name() -> None:
    gitops = config.parse_settings(
        {
            **BASE,
            "gitops": {
                "kai": {"kind": "HR", "name": "flux-system/kai-scheduler"},
                "keda": {"kind": "app", "name": "argocd/keda"},
                "reconcile_timeout": "90s",
            },
        }
    ).gitops
    assert gitops.shortcut("kai") == config.GitopsShortcut(
        "HelmRelease", "flux-system", "kai-scheduler"
    )
    assert gitops.shortcut("keda") == config.GitopsShortcut("Application", "argocd", "keda")
    assert gitops.reconcile_timeout == timedelta(seconds=90)


def test_each_problem_in_a_shortcut_names_its_own_key() -> None:
    assert problems({"kai": {"kind": "pod", "nam": "x"}, "keda": "flux-system/keda"}) == [
        "gitops.kai.kind: 'pod' is not a shortcut kind "
        "(expected helmrelease, kustomization or application)",
        "gitops.kai: unknown key 'nam' (known keys: kind, name)",
        "gitops.kai.name: required (expected NAMESPACE/NAME of that object, "
        "like flux-system/kai-scheduler)",
        "gitops.keda: 'flux-system/keda' is not a mapping (expected keys: kind, name)",
    ]


def test_a_name_without_a_namespace_is_refused() -> None:
    assert problems({"kai": {"kind": "ks", "name": "apps"}}) == [
        "gitops.kai.name: 'apps' is not NAMESPACE/NAME "
        "(expected NAMESPACE/NAME of that object, like flux-system/kai-scheduler)"
    ]


def test_a_wait_longer_than_a_response_url_lives_is_refused() -> None:
    assert problems({"reconcile_timeout": "1h"}) == [
        "gitops.reconcile_timeout: '1h' is too long (expected at most 25m: the result is posted "
        "through a Slack response_url, which expires after 30 minutes)"
    ]


def test_an_unknown_gitops_key_is_refused() -> None:
    assert problems({"flux": {}}) == [
        "gitops: unknown key 'flux' (known keys: kai, keda, reconcile_timeout)"
    ]
