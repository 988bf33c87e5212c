"""Reading the configuration file: a file that cannot be used is one clear line, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import settings as config
from bot.core import errors

VALID = """\
clusters:
  - name: prod
slack:
  alert_channel: C0123456789
"""


def problems_loading(path: Path) -> list[str]:
    with pytest.raises(errors.ConfigError) as caught:
        config.load_settings(str(path))
    return caught.value.problems


def test_a_valid_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(VALID, encoding="utf-8")

    assert config.load_settings(str(path)).cluster(None).name == "prod"


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"

    assert problems_loading(path) == [f"{path}: no such file (start from config.example.yaml)"]


def test_a_directory_instead_of_a_file_is_one_line_naming_it(tmp_path: Path) -> None:
    [problem] = problems_loading(tmp_path)

    assert problem.startswith(f"{tmp_path}: cannot read it: ")


def test_a_yaml_syntax_error_is_one_line_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("clusters:\n  - name: prod\n slack: x\n", encoding="utf-8")

    [problem] = problems_loading(path)

    assert problem.startswith(f"{path}: not valid YAML: ")
    assert problem.endswith("(line 3, column 2)")


def test_a_key_written_twice_is_refused_instead_of_silently_replaced(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(VALID + "slack:\n  alert_channel: C9999999999\n", encoding="utf-8")

    [problem] = problems_loading(path)

    assert "found key 'slack' twice" in problem
    assert "(line 5, column 1)" in problem


def test_a_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"clusters:\x80\xff\n")

    [problem] = problems_loading(path)

    assert problem.startswith(f"{path}: not valid YAML: ")


@pytest.mark.parametrize(
    ("content", "got"),
    [("", "the file is empty"), ("- prod\n- staging\n", 'the file holds ["prod", "staging"]')],
    ids=["empty", "a-list"],
)
def test_a_file_that_is_not_a_mapping_is_one_problem(
    tmp_path: Path, content: str, got: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(content, encoding="utf-8")

    [problem] = problems_loading(path)

    assert problem.startswith(f"{got} (expected a mapping with the keys clusters, slack,")


def test_yaml_tags_that_build_python_objects_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("!!python/object/apply:os.system ['true']\n", encoding="utf-8")

    [problem] = problems_loading(path)

    assert "not valid YAML" in problem


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("clusters: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("clusters: " + "1" * 5000 + "\n", "Exceeds the limit (4300 digits)"),
    ],
    ids=["nested-too-deeply", "a-5000-digit-number"],
)
def test_yaml_the_parser_cannot_build_is_one_line_not_a_traceback(
    tmp_path: Path, content: str, said: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(content, encoding="utf-8")

    [problem] = problems_loading(path)

    assert problem.startswith(f"{path}: not valid YAML: ")
    assert said in problem
    assert "sys.set_int_max_str_digits" not in problem
