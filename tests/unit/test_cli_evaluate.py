"""`kai-chatops evaluate`: offline verdicts for dumps, in the exact JSON shape of docs/design.md
§1.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import cli

DEGRADED_CONFIG = """
apiVersion: kai.scheduler/v1
kind: Config
metadata: {name: kai-config, generation: 2}
status:
  conditions:
  - {type: Deployed, status: "True", reason: deployed, observedGeneration: 2}
  - {type: Available, status: "True", reason: available, observedGeneration: 2}
  - type: DependenciesFulfilled
    status: "False"
    reason: dependencies_missing
    message: "\\nKAI-prometheus is missing prometheus operator"
    observedGeneration: 2
"""

PAUSED_SCALEDJOB = """
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata:
  name: annia-worker
  namespace: annia
  annotations: {autoscaling.keda.sh/paused: "true"}
status:
  conditions:
  - {type: Ready, status: "True", reason: ScaledJobReady}
  - {type: Paused, status: "True", reason: ScaledJobPaused}
"""

LIST_OF_TWO = """
apiVersion: v1
kind: List
items:
- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata: {name: kai-scheduler, namespace: argocd}
  status: {health: {status: Healthy}, sync: {status: Synced}}
- apiVersion: v1
  kind: Pod
  metadata: {name: stray, namespace: default}
"""


def evaluate_json(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, object]]:
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    assert cli.main(["evaluate", "--output", "json", str(path)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_json_lines_have_exactly_the_design_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [line] = evaluate_json(tmp_path, DEGRADED_CONFIG, capsys)
    assert set(line) == {"kind", "namespace", "name", "health", "message"}
    assert line["kind"] == "Config"
    assert line["namespace"] is None
    assert line["health"] == "Degraded"
    assert "\nKAI-prometheus is missing prometheus operator" in str(line["message"])


def test_multi_document_yaml_gives_one_line_per_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = evaluate_json(tmp_path, DEGRADED_CONFIG + "---\n" + PAUSED_SCALEDJOB, capsys)
    assert [(x["kind"], x["health"]) for x in lines] == [
        ("Config", "Degraded"),
        ("ScaledJob", "Suspended"),
    ]
    assert lines[1]["namespace"] == "annia"


def test_a_kubectl_list_is_flattened_and_an_unknown_kind_is_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = evaluate_json(tmp_path, LIST_OF_TWO, capsys)
    assert [(x["kind"], x["health"]) for x in lines] == [
        ("Application", "Healthy"),
        ("Pod", "Unknown"),
    ]
    assert "Pod" in str(lines[1]["message"])


def test_text_output_names_each_object_and_keeps_multiline_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(DEGRADED_CONFIG)
    assert cli.main(["evaluate", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Config kai-config: Degraded")
    assert "    KAI-prometheus is missing prometheus operator" in out


def test_invalid_yaml_exits_two_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: Config\nmetadata: {name: [unclosed\n")
    assert cli.main(["evaluate", str(path)]) == 2
    assert "broken.yaml" in capsys.readouterr().err


def test_a_missing_file_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["evaluate", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


UNREADABLE = [
    pytest.param(b"kind: Config\nmetadata: {name: caf\xe9}\n", "not UTF-8 text", id="latin-1"),
    pytest.param(b"\x7fELF\x02\x01\x01\x00\x00\x00\xc3\x28", "not UTF-8 text", id="binary"),
    pytest.param('{"kind": "Config"}'.encode("utf-16"), "UTF-16 or UTF-32", id="json-in-utf-16"),
    pytest.param(b'{"kind": "Config", "x": "\xe9"}', "not UTF-8 text", id="json-not-utf-8"),
    pytest.param(b"just some text\n", "bare value (str)", id="yaml-a-string"),
    pytest.param(b"- 1\n- 2\n", "bare value (int)", id="yaml-a-list-of-numbers"),
    pytest.param(b"[" * 5000 + b"]" * 5000, "nested too deeply", id="json-nested-too-deeply"),
    pytest.param(b"x: " + b"1" * 5000, "cannot read a value", id="a-5000-digit-number"),
]


@pytest.mark.parametrize(("content", "said"), UNREADABLE)
def test_unreadable_input_exits_two_with_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, said: str
) -> None:
    path = tmp_path / "dump.yaml"
    path.write_bytes(content)

    assert cli.main(["evaluate", "--output", "json", str(path)]) == 2

    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"kai-chatops: cannot read {path}: ") or line.startswith(
        f"kai-chatops: {path}: "
    )
    assert said in line


def test_a_directory_exits_two_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["evaluate", str(tmp_path)]) == 2

    assert capsys.readouterr().err == f"kai-chatops: cannot read {tmp_path}: Is a directory\n"


def test_stdin_that_is_not_utf8_exits_two_whatever_the_locale() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "evaluate", "-"],
        input=b"kind: Config\nmetadata: {name: caf\xe9}\n",
        capture_output=True,
        env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": ""},
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert done.stderr.decode() == (
        "kai-chatops: cannot read stdin: not UTF-8 text (byte 0xe9 on line 2);"
        " evaluate reads YAML or JSON in UTF-8\n"
    )


def test_a_utf8_byte_order_mark_is_read_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dump.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + PAUSED_SCALEDJOB.encode())

    assert cli.main(["evaluate", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ScaledJob annia/annia-worker: Suspended")


def test_stdin_is_read_with_a_dash() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot", "evaluate", "--output", "json", "-"],
        input=PAUSED_SCALEDJOB,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["health"] == "Suspended"


DEPLOYMENTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: binder, namespace: kai-scheduler}
spec: {replicas: 1}
status:
  updatedReplicas: 1
  availableReplicas: 1
  conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: admission, namespace: kai-scheduler}
spec: {replicas: 2}
status:
  updatedReplicas: 2
  availableReplicas: 0
  conditions: [{type: Available, status: "False", reason: MinimumReplicasUnavailable}]
"""


@pytest.mark.parametrize(
    ("text", "strict", "code"),
    [
        (PAUSED_SCALEDJOB, False, 0),
        (PAUSED_SCALEDJOB, True, 1),
        (DEPLOYMENTS.split("---")[0], True, 0),
        (DEGRADED_CONFIG, True, 1),
    ],
    ids=["not-strict", "suspended-fails-strict", "healthy-passes-strict", "degraded-fails"],
)
def test_evaluate_strict_exits_one_when_any_object_is_not_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, strict: bool, code: int
) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    assert cli.main(["evaluate", *(["--strict"] if strict else []), str(path)]) == code


def test_evaluate_judges_deployments_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verdicts = evaluate_json(tmp_path, DEPLOYMENTS, capsys)
    assert [(v["name"], v["health"]) for v in verdicts] == [
        ("binder", "Healthy"),
        ("admission", "Degraded"),
    ]
    assert verdicts[1]["message"].startswith("not available (2/2 updated, 0 available)")


@pytest.mark.parametrize(
    ("text", "output"),
    [("apiVersion: v1\nkind: List\nitems: []\n", "text"), ("", "text"), ("", "json")],
    ids=["empty-list", "empty-file", "empty-json"],
)
def test_evaluate_an_empty_list_says_no_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, output: str
) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert cli.main(["evaluate", "--output", output, "--strict", str(path)]) == 0
    captured = capsys.readouterr()
    said = captured.err if output == "json" else captured.out
    assert said.strip() == f"no objects in {path}"
    if output == "json":
        assert captured.out == ""


def test_evaluate_input_without_kind_has_no_stray_separator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("metadata: {name: x}\n---\napiVersion: v1\nkind: Pod\nmetadata: {}\n")
    cli.main(["evaluate", str(path)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "x: Unknown: not a Kubernetes object: it has no kind"
    assert lines[1] == "Pod: Unknown: not a Kubernetes object: this Pod has no metadata.name"
    assert not any(" : " in line or line.startswith(" ") for line in lines)


FLUX_SOURCES = """
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: kai, namespace: flux-system, generation: 1}
spec: {type: oci, url: "oci://ghcr.io/kai-scheduler/kai-scheduler"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: keda, namespace: flux-system, generation: 3}
status:
  observedGeneration: 3
  conditions:
  - {type: Stalled, status: "True", reason: InvalidChartReference, message: "no chart"}
  - {type: Ready, status: "Unknown", reason: Progressing, message: "fetching chart keda@2.17"}
"""


def test_evaluate_flux_an_oci_helmrepository_is_healthy_static_and_stalled_speaks_ready_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    oci, stalled = evaluate_json(tmp_path, FLUX_SOURCES, capsys)

    assert oci["health"] == "Healthy"
    assert str(oci["message"]).startswith("static: Flux does not reconcile a HelmRepository")
    assert stalled["health"] == "Degraded"
    assert str(stalled["message"]).endswith(": fetching chart keda@2.17")
