"""The start event, sent once when TensorFlow has been imported."""

from __future__ import annotations

import sys
import types

import pytest

from chaos.agent import start
from chaos.events import StartEvent
from chaos.worker.fingerprint import python_version


@pytest.mark.parametrize(
    "value, dist",
    [("1", "tf-keras"), ("true", "tf-keras"), ("True", "tf-keras"), ("0", "keras"), ("yes", "keras"), (None, "keras")],
)
def test_keras_distribution_follows_tensorflows_own_test(value, dist):
    assert start.keras_distribution({} if value is None else {"TF_USE_LEGACY_KERAS": value}) == dist


def test_start_is_sent_once_with_versions_and_fingerprint(captured, monkeypatch):
    monkeypatch.setenv("TF_SOMETHING", "on")
    tf = types.SimpleNamespace(__version__="2.99.0")
    start.on_tensorflow(tf)
    start.on_tensorflow(tf)
    (event,) = [e for e in captured.events() if isinstance(e, StartEvent)]
    assert isinstance(event, StartEvent)
    assert (event.tf_version, event.python_version) == ("2.99.0", python_version())
    assert event.fingerprint["env:TF_SOMETHING"] == "on"
    assert "pkg:tfchaos" in event.fingerprint


def test_ensure_started_only_once_tensorflow_is_imported(captured, monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    start.ensure_started()
    assert captured.events() == []
    monkeypatch.setitem(sys.modules, "tensorflow", types.SimpleNamespace(__version__="2.15.1"))
    start.ensure_started()
    start.ensure_started()
    assert [e.tf_version for e in captured.events() if isinstance(e, StartEvent)] == ["2.15.1"]
