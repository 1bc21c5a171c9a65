"""The direction of imports, as pyproject.toml's [tool.importlinter] contracts
say it: ``lint-imports`` must keep every contract, with no exception listed,
and every package of chaos must have its place in the layers."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import pytest

import chaos

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "pyproject.toml"


def importlinter_config() -> dict:
    return tomllib.loads(CONFIG.read_text(encoding="utf-8"))["tool"]["importlinter"]


def test_every_import_contract_is_kept(capsys, monkeypatch):
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    code = lint_imports(config_filename=str(CONFIG), no_cache=True)
    out = capsys.readouterr().out
    assert code == 0, "an import breaks a contract of pyproject.toml [tool.importlinter]:\n" + out[out.find("Broken") :]


def test_no_contract_lists_an_exception():
    for contract in importlinter_config()["contracts"]:
        assert "ignore_imports" not in contract, f"contract {contract['id']!r} lists exceptions; fix the import instead"


def test_every_part_of_chaos_has_its_place_in_the_layers():
    (layers,) = [c["layers"] for c in importlinter_config()["contracts"] if c["type"] == "layers"]
    placed = {name.strip(" ()") for layer in layers for name in layer.replace("|", ":").split(":")}
    parts = {f"chaos.{m.name}" for m in pkgutil.iter_modules(chaos.__path__) if m.name != "__main__"}
    missing = sorted(parts - placed)
    assert missing == [], (
        f"{', '.join(missing)} not in the layers contract of pyproject.toml: add each to the layer "
        "whose modules it may import (and that nothing below it imports)"
    )


@pytest.mark.parametrize("contract_id", ["layers", "docker-sdk", "backend-seam", "cli-leaves", "in-the-image"])
def test_the_contracts_the_docs_name_exist(contract_id):
    assert contract_id in {c["id"] for c in importlinter_config()["contracts"]}
