"""Fixtures for the agent's unit tests: captured events, a clean agent state,
a fake Keras (the boundary the agent hooks) and NumPy (the real one when
installed, else a small fake with the calls the digest makes)."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path

import pytest

# --import-mode=importlib keeps test folders off sys.path; the fakes live here.
sys.path.insert(0, str(Path(__file__).parent))

from chaos.agent import errors, guard, report, runtime, start  # noqa: E402
from chaos.events import LogLine, parse_line  # noqa: E402
from chaos.worker.emit import Emitter  # noqa: E402


class Captured:
    def __init__(self) -> None:
        self.stream = io.StringIO()

    def events(self):
        out = []
        for line in self.stream.getvalue().splitlines():
            event = parse_line(line, "worker-0", 0.0)
            if not isinstance(event, LogLine):
                out.append(event)
        return out

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events()]


@pytest.fixture(autouse=True)
def clean_agent_state(monkeypatch):
    """Every test starts with an agent that has reported nothing."""
    monkeypatch.setattr(errors, "_reported", [])
    monkeypatch.setattr(guard, "_complained", set())
    monkeypatch.setattr(start, "_started", False)
    monkeypatch.setattr(report, "_known", {"steps_per_epoch": 0, "step": 0, "epoch": 0})
    monkeypatch.setattr(runtime, "_emitter", None)
    monkeypatch.setattr(runtime, "_fit_depth", [0])
    monkeypatch.setattr(runtime, "_job_reports", [False])
    monkeypatch.delenv("CHAOS_AGENT", raising=False)
    # The agent wraps these hooks; whatever a test does to them is undone.
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    yield


@pytest.fixture
def captured(monkeypatch):
    """The agent on (CHAOS_AGENT=1), its events captured."""
    monkeypatch.setenv("CHAOS_AGENT", "1")
    cap = Captured()
    monkeypatch.setattr(runtime, "_emitter", Emitter(source="worker-0", stream=cap.stream))
    return cap


@pytest.fixture
def numpy_module(monkeypatch):
    """NumPy if installed; else the fake, put in sys.modules for this test."""
    try:
        import numpy

        return numpy
    except ImportError:
        import fake_numpy

        monkeypatch.setitem(sys.modules, "numpy", fake_numpy)
        return fake_numpy


@pytest.fixture
def fake_keras(monkeypatch, numpy_module):
    import fake_keras as fk

    modules = fk.make_modules("fakekeras")
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return modules
