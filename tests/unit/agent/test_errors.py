"""Uncaught exceptions: one error event each, then the original hook runs."""

from __future__ import annotations

import sys
import threading

import pytest

from chaos.agent import errors
from chaos.events import ErrorEvent


class CollectiveError(Exception):
    pass


@pytest.fixture
def hooks(monkeypatch):
    """Stand-ins for the interpreter's own hooks, recording what reaches them."""
    seen = {"sys": [], "thread": []}
    monkeypatch.setattr(sys, "excepthook", lambda *a: seen["sys"].append(a))
    monkeypatch.setattr(threading, "excepthook", lambda args: seen["thread"].append(args))
    errors.install()
    return seen


def raised(exc):
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001
        return type(caught), caught, caught.__traceback__


def test_uncaught_exception_is_an_error_event_then_the_original_hook_runs(hooks, captured):
    info = raised(CollectiveError("Collective ops is aborted by: Socket closed"))
    sys.excepthook(*info)
    (event,) = captured.events()
    assert isinstance(event, ErrorEvent)
    assert event.error_class == f"{__name__}.CollectiveError"
    assert event.message == "Collective ops is aborted by: Socket closed"
    assert hooks["sys"] == [info]  # called with exactly what the interpreter gave


def test_nested_class_name_is_module_and_qualname(hooks, captured):
    class Inner(Exception):
        pass

    sys.excepthook(*raised(Inner("x")))
    assert captured.events()[0].error_class.endswith("test_nested_class_name_is_module_and_qualname.<locals>.Inner")


def test_message_is_cut_at_4000_characters(hooks, captured):
    sys.excepthook(*raised(ValueError("m" * 5000)))
    assert captured.events()[0].message == "m" * 4000


def test_the_same_exception_is_reported_once(hooks, captured):
    info = raised(CollectiveError("once"))
    errors.report_exception(info[1])  # e.g. when it escaped fit
    sys.excepthook(*info)
    assert len(captured.events()) == 1 and len(hooks["sys"]) == 1


def test_thread_exception_is_reported_and_chained_system_exit_is_not(hooks, captured):
    boom = threading.Thread(target=lambda: (_ for _ in ()).throw(CollectiveError("in a thread")))
    boom.start()
    boom.join()
    quits = threading.Thread(target=lambda: sys.exit(3))
    quits.start()
    quits.join()
    assert [e.message for e in captured.events()] == ["in a thread"]
    assert [type(a.exc_value) for a in hooks["thread"]] == [CollectiveError, SystemExit]


def test_install_twice_wraps_once_and_wraps_a_hook_set_since(hooks, captured, monkeypatch):
    ours = sys.excepthook
    errors.install()
    assert sys.excepthook is ours
    later = []
    monkeypatch.setattr(sys, "excepthook", lambda *a: later.append(a))  # e.g. a library's own hook
    errors.install()
    sys.excepthook(*raised(CollectiveError("after")))
    assert len(later) == 1 and [e.message for e in captured.events()] == ["after"]


def test_a_failing_report_still_runs_the_original_hook(hooks, monkeypatch, capsys):
    monkeypatch.setenv("CHAOS_AGENT", "1")
    from chaos.agent import runtime

    class Broken:
        def emit(self, *a, **k):
            raise OSError("no stdout")

    monkeypatch.setattr(runtime, "_emitter", Broken())
    sys.excepthook(*raised(CollectiveError("x")))
    assert len(hooks["sys"]) == 1
    assert "tfchaos agent: reporting an error failed, ignored: OSError: no stdout" in capsys.readouterr().err
