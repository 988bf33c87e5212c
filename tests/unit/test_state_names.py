"""The names of the state ConfigMaps (`bot.state.names`) and the cluster names the configmap
backend refuses at config load."""

from __future__ import annotations

import pytest

from bot.config import settings as config
from bot.config.model import STATE_SUFFIXES
from bot.core import errors
from bot.kube.kinds import owned_config_map
from bot.state import names
from testbed.sim.selectors import parse_label_selector

BASE = {"slack": {"alert_channel": "C0ALERTS"}, "state": {"backend": "configmap"}}


def test_each_cluster_has_a_configmap_of_its_own_and_the_fleet_one_no_cluster_can_make() -> None:
    assert names.document_name("kai-chatops-state", "prod") == "kai-chatops-state-prod"
    assert names.document_name("kai-chatops-state", "_fleet") == "kai-chatops-state--fleet"
    assert [names.own_name("s", suffix) for suffix in STATE_SUFFIXES] == [
        "s-once",
        "s-changes",
        "s-approvals",
    ]


def test_the_copy_watches_our_label_and_leaves_out_the_stores_that_are_not_alert_state() -> None:
    labels = owned_config_map("x", "ns", {})["metadata"]["labels"]  # type: ignore[index]
    [requirement] = parse_label_selector(names.OWNED_LABEL)
    assert requirement.matches(labels[requirement.key])  # type: ignore[index]
    assert names.alert_documents_selector("s") == (
        "metadata.name!=s-once,metadata.name!=s-changes,metadata.name!=s-approvals"
    )


@pytest.mark.parametrize("suffix", STATE_SUFFIXES)
def test_a_cluster_named_after_a_store_of_the_bots_is_refused_on_the_configmap_backend(
    suffix: str,
) -> None:
    raw = {**BASE, "clusters": [{"name": "prod"}, {"name": suffix}]}
    with pytest.raises(errors.ConfigError) as refused:
        config.parse_settings(raw)
    assert refused.value.problems == [
        f"clusters[1].name: {suffix!r} cannot be used with state.backend configmap (its alert "
        f"state would be the ConfigMap kai-chatops-state-{suffix}, which keeps the bot's "
        f"{suffix}; expected a name other than once, changes, approvals)"
    ]
    sqlite = {**raw, "state": {"backend": "sqlite"}}
    assert [c.name for c in config.parse_settings(sqlite).clusters] == ["prod", suffix]


def test_a_configmap_name_past_253_characters_is_refused() -> None:
    raw = {**BASE, "clusters": [{"name": "a" * 63}]}
    raw["state"] = {"backend": "configmap", "configmap": "s" * 190}
    with pytest.raises(errors.ConfigError, match=r"longer than 253 characters"):
        config.parse_settings(raw)
