"""docs/ARCHITECTURE.md names every package and every exception to the import contracts.

A package added under bot/ (or handlers/, testbed/ and its subpackages) without a line in the
map, or an `ignore_imports` entry added to pyproject.toml without its reason in the doc, fails
here: the map stays the whole tree, and every way around a contract stays written down.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]["contracts"]


def packages() -> list[str]:
    """Every package of the product and the test bed, as a folder path (`bot/alerts`)."""
    found = []
    for top in ("bot", "handlers", "testbed"):
        for init in sorted((ROOT / top).rglob("__init__.py")):
            found.append(init.parent.relative_to(ROOT).as_posix())
    return found


def exceptions() -> list[str]:
    """Every `ignore_imports` entry of every import contract."""
    return [entry for contract in CONTRACTS for entry in contract.get("ignore_imports", [])]


def is_named(package: str) -> bool:
    """Named as a folder (`bot/alerts/`) or as a module (`bot.alerts`)."""
    return f"{package}/" in DOC or f"`{package.replace('/', '.')}`" in DOC


def test_the_tree_has_the_packages_the_doc_is_about() -> None:
    assert {"bot", "bot/alerts", "bot/service", "handlers", "testbed", "testbed/sim"} <= set(
        packages()
    )


@pytest.mark.parametrize("package", packages())
def test_every_package_is_named_in_the_architecture(package: str) -> None:
    assert is_named(package), f"docs/ARCHITECTURE.md does not name {package}/"


def test_the_contracts_have_exceptions_to_check() -> None:
    assert "bot.cli -> testbed.demo" in exceptions()


@pytest.mark.parametrize("entry", exceptions())
def test_every_import_exception_is_listed_in_the_architecture(entry: str) -> None:
    assert f"`{entry}`" in DOC, f"docs/ARCHITECTURE.md does not list the exception {entry}"


def test_every_layer_of_the_layers_contract_is_drawn() -> None:
    drawn = DOC[DOC.index("## The layers") :]
    for contract in CONTRACTS:
        for layer in contract.get("layers", []):
            for module in layer.replace("|", ":").split(":"):
                name = module.strip()
                assert name.rsplit(".", 1)[-1] in drawn, f"layer module {name} is not drawn"
