"""Post-import hooks on real modules written to disk and imported by the real
import system."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import uuid

import pytest

from chaos.agent.importhook import PostImportFinder


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A fresh package on sys.path: NAME.engine.training defines Model."""
    name = f"hookpkg_{uuid.uuid4().hex[:8]}"
    training = tmp_path / name / "engine"
    training.mkdir(parents=True)
    (tmp_path / name / "__init__.py").write_text("")
    (training / "__init__.py").write_text("")
    (training / "training.py").write_text(
        "EXECUTED = True\nclass Model:\n    def fit(self):\n        return 'fitted'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = PostImportFinder()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    yield name, finder
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def test_hook_runs_once_after_the_module_executed_and_the_real_loader_stays(package):
    name, finder = package
    seen = []
    finder.register(f"{name}.engine.training", lambda m: seen.append((m.__name__, getattr(m, "EXECUTED", False))))
    module = importlib.import_module(f"{name}.engine.training")
    importlib.import_module(f"{name}.engine.training")
    assert seen == [(f"{name}.engine.training", True)]
    assert type(module.__loader__) is importlib.machinery.SourceFileLoader
    assert module.__spec__.loader is module.__loader__
    assert module.Model().fit() == "fitted"


def test_a_failing_hook_does_not_fail_the_import(package, capsys):
    name, finder = package

    def broken(module):
        raise KeyError("agent bug")

    finder.register(f"{name}.engine.training", broken)
    module = importlib.import_module(f"{name}.engine.training")
    assert module.EXECUTED
    assert "tfchaos agent: hook on" in capsys.readouterr().err


def test_a_module_imported_before_registration_gets_the_hook_at_once(package):
    name, finder = package
    importlib.import_module(f"{name}.engine.training")
    seen = []
    finder.register(f"{name}.engine.training", seen.append)
    assert [m.__name__ for m in seen] == [f"{name}.engine.training"]


def test_other_modules_and_missing_ones_import_as_without_the_finder(package):
    name, finder = package
    finder.register(f"{name}.engine.missing", lambda m: None)
    assert finder.find_spec(f"{name}.engine") is None  # not watched: not ours to answer
    importlib.import_module(f"{name}.engine")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{name}.engine.missing")
