"""`without_package_init`: a package entered without its `__init__` loads only the parts asked
for, and is the whole package as soon as anything else is asked of it (the gateway enters
`kubernetes` this way; tests/unit/test_cli_imports.py checks what `serve` loads)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.kube.importing import without_package_init

PACKAGE = "fake_client_package"
FILES = {
    "__init__.py": "from . import heavy\nfrom .light import VALUE\nVERSION = '1.2'\n",
    "heavy.py": "LOADED = True\n",
    "light.py": "VALUE = 7\n",
}


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    (tmp_path / PACKAGE).mkdir()
    for name, text in FILES.items():
        (tmp_path / PACKAGE / name).write_text(text)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        yield PACKAGE
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


@pytest.mark.parametrize(
    "statement", [f"import {PACKAGE}.light as part", f"from {PACKAGE} import light as part"]
)
def test_a_part_is_imported_without_the_rest_of_the_package(package: str, statement: str) -> None:
    without_package_init(package)
    names: dict[str, Any] = {}
    exec(statement, names)
    assert names["part"].VALUE == 7
    assert f"{package}.heavy" not in sys.modules


@pytest.mark.parametrize(
    "statement",
    [f"from {PACKAGE} import VERSION", f"import {PACKAGE}; VERSION = {PACKAGE}.VERSION"],
)
def test_any_other_name_runs_the_whole_package_once(package: str, statement: str) -> None:
    without_package_init(package)
    importlib.import_module(f"{package}.light")
    names: dict[str, Any] = {}
    exec(statement, names)
    assert names["VERSION"] == "1.2"
    assert sys.modules[f"{package}.heavy"].LOADED
    assert "__getattr__" not in vars(sys.modules[package])  # whole: nothing left to run


def test_a_package_already_imported_is_left_as_it_is(package: str) -> None:
    whole = importlib.import_module(package)
    without_package_init(package)
    assert sys.modules[package] is whole


def test_a_name_that_is_not_installed_is_left_to_the_import() -> None:
    without_package_init("no_such_package_here")
    assert "no_such_package_here" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("no_such_package_here")
