"""The chart's RBAC and admission policies are deploy/'s, made by `make chart`: one source.

deploy/base and its components are where the rules are written and tested; the chart's copies
(deploy/chart/templates/generated/) are tools/chart_sync.py's output, and its `--check` names any
copy that is stale, edited by hand or left over.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deploy_render import DEPLOY, chart_sync

GENERATED = "deploy/chart/templates/generated"
RBAC_CLUSTER = f"{GENERATED}/base-rbac-cluster.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of deploy/ as the tool sees the repository (it reads nothing else)."""
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    return tmp_path


def test_the_charts_rbac_and_policies_are_what_make_chart_writes() -> None:
    assert chart_sync.main(["--check"]) == 0


def test_a_verb_changed_in_deploy_only_is_named_until_make_chart_copies_it(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = repo / "deploy/base/rbac-cluster.yaml"
    source.write_text(source.read_text().replace("verbs: [patch]", "verbs: [patch, delete]"))
    assert chart_sync.main(["--check"], root=repo) == 1
    err = capsys.readouterr().err
    assert f"{RBAC_CLUSTER}: not what make chart makes of deploy/" in err
    assert "base-rbac-kai.yaml" not in err, "only the stale copy is named"
    assert chart_sync.main([], root=repo) == 0
    assert "- delete" in (repo / RBAC_CLUSTER).read_text()
    assert chart_sync.main(["--check"], root=repo) == 0


def test_a_chart_template_edited_by_hand_is_named_and_make_chart_puts_it_back(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generated = repo / RBAC_CLUSTER
    original = generated.read_text()
    generated.write_text(original.replace("  - watch\n", "  - watch\n  - delete\n", 1))
    assert chart_sync.main(["--check"], root=repo) == 1
    assert RBAC_CLUSTER in capsys.readouterr().err
    assert chart_sync.main([], root=repo) == 0
    assert generated.read_text() == original


def test_a_template_made_from_no_file_of_deploy_is_named(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / GENERATED / "base-old.yaml").write_text("# gone\n")
    assert chart_sync.main(["--check"], root=repo) == 1
    assert "base-old.yaml: made from no file of deploy/ (delete it)" in capsys.readouterr().err
