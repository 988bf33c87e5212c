"""Parsing what `kai-chatops evaluate` reads: YAML, multi-doc YAML, JSON, and List kinds."""

from __future__ import annotations

import json

import pytest

from bot.core.errors import UserError
from bot.kube.manifests import parse_documents

CONFIG_YAML = """\
apiVersion: kai.scheduler/v1
kind: Config
metadata:
  name: kai-config
  generation: 2
  creationTimestamp: "2026-08-10T09:12:30Z"
status:
  conditions:
  - type: DependenciesFulfilled
    status: "False"
    reason: dependencies_missing
    message: "\\nKAI-prometheus is missing prometheus operator"
    observedGeneration: 2
    lastTransitionTime: 2026-08-10T09:12:41Z
"""

SHARD_YAML = """\
apiVersion: kai.scheduler/v1
kind: SchedulingShard
metadata: {name: default}
"""

KUBECTL_LIST = """\
apiVersion: v1
kind: List
items:
- apiVersion: keda.sh/v1alpha1
  kind: ScaledJob
  metadata: {name: annia-worker, namespace: annia}
- apiVersion: keda.sh/v1alpha1
  kind: ScaledJob
  metadata: {name: invoice-renderer, namespace: billing}
metadata:
  resourceVersion: ""
"""


def names(text: str) -> list[str]:
    return [obj["metadata"]["name"] for obj in parse_documents(text, "dump.yaml")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(CONFIG_YAML, ["kai-config"], id="single-yaml"),
        pytest.param(f"{CONFIG_YAML}---\n{SHARD_YAML}", ["kai-config", "default"], id="multi-doc"),
        pytest.param(
            f"---\n{SHARD_YAML}---\n---\n# only a comment\n---\n", ["default"], id="empty-docs"
        ),
        pytest.param(KUBECTL_LIST, ["annia-worker", "invoice-renderer"], id="kind-list"),
        pytest.param(
            KUBECTL_LIST.replace("kind: List", "kind: ScaledJobList"),
            ["annia-worker", "invoice-renderer"],
            id="typed-list",
        ),
        pytest.param(
            f"{KUBECTL_LIST}---\n{SHARD_YAML}",
            ["annia-worker", "invoice-renderer", "default"],
            id="list-then-doc",
        ),
        pytest.param("", [], id="empty-file"),
        pytest.param("apiVersion: v1\nkind: List\nitems: []\n", [], id="empty-list"),
    ],
)
def test_documents_are_flattened_in_order(text: str, expected: list[str]) -> None:
    assert names(text) == expected


def test_json_documents_and_json_lists_are_accepted() -> None:
    single = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0"}})
    listed = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [{"kind": "Pod", "metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
        },
        indent="\t",
    )

    assert names(single) == ["web-0"]
    assert names(listed) == ["a", "b"]


def test_a_kind_named_list_without_items_stays_an_object() -> None:
    text = "apiVersion: example.io/v1\nkind: Playlist\nmetadata: {name: x}\nspec: {}\n"

    assert names(text) == ["x"]


def test_timestamps_and_messages_stay_as_the_api_wrote_them() -> None:
    (config,) = parse_documents(CONFIG_YAML, "config.yaml")

    condition = config["status"]["conditions"][0]
    assert condition["lastTransitionTime"] == "2026-08-10T09:12:41Z"
    assert condition["message"] == "\nKAI-prometheus is missing prometheus operator"
    assert config["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param(
            "kind: Config\nmetadata:\n  name: a\n   bad: indent\n", "line 4", id="bad-indent"
        ),
        pytest.param("kind: Config\nmetadata: {name: a\n", "line 3", id="unclosed-flow"),
        pytest.param('{"kind": "Config",\n "metadata": {"name": "a"}\n', "line 3", id="bad-json"),
        pytest.param("kind: Config\nname: \x00\n", "line 2", id="control-character"),
    ],
)
def test_invalid_yaml_names_the_source_and_the_line(text: str, fragment: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_documents(text, "broken.yaml")

    assert str(caught.value).startswith("broken.yaml: invalid YAML at ")
    assert fragment in str(caught.value)


def test_a_bare_value_document_is_refused_with_its_position() -> None:
    with pytest.raises(UserError, match=r"^-: document 2 is a bare value \(str\), not an object$"):
        parse_documents(f"{SHARD_YAML}---\njust some text\n", "-")
