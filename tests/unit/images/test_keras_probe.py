"""A scenario that asks for a Keras its image lacks is refused before anything starts."""

from __future__ import annotations

import json
import types

import pytest

from chaos.errors import ScenarioError
from chaos.images import keras_probe

TF220 = {"tensorflow-cpu": "2.20.0", "tf-keras": "2.20.1", "keras": "3.15.1"}
TF215 = {"tensorflow-cpu": "2.15.1", "keras": "2.15.0"}
NO_LEGACY = {"tensorflow": "2.21.0", "keras": "3.15.1"}


@pytest.mark.parametrize(
    "found, value, says",
    [
        (TF220, "1", None),
        (TF220, "0", None),
        (
            NO_LEGACY,
            "1",
            "TF_USE_LEGACY_KERAS=1 asks for tf-keras (Keras 2), but acme/job:1 holds keras 3.15.1, "
            "tensorflow 2.21.0 and no tf-keras",
        ),
        (TF215, "0", "asks for Keras 3, but acme/job:1 holds TensorFlow 2.15.1, whose tf.keras is its own Keras 2"),
        (
            TF215,
            "true",
            "asks for tf-keras (Keras 2), but acme/job:1 holds keras 2.15.0, tensorflow-cpu 2.15.1 and no tf-keras",
        ),
        ({"tensorflow": "2.21.0"}, "0", "asks for Keras 3, but acme/job:1 holds tensorflow 2.21.0"),
    ],
)
def test_what_an_image_can_give(found, value, says):
    got = keras_probe.problem("acme/job:1", value, found)
    assert (got is None) if says is None else (says in got), got


class FakeClient:
    def __init__(self, output: bytes | Exception):
        self.output, self.runs = output, []
        self.images = types.SimpleNamespace(get=lambda ref: types.SimpleNamespace(id=f"sha256:{ref}"))
        self.containers = types.SimpleNamespace(run=self._run)

    def _run(self, image, command, **kwargs):
        self.runs.append((image, kwargs))
        if isinstance(self.output, Exception):
            raise self.output
        return self.output


def test_refused_with_the_image_and_what_it_holds(monkeypatch):
    monkeypatch.setattr(keras_probe, "_cache", {})
    client = FakeClient(json.dumps(NO_LEGACY).encode() + b"\n")
    with pytest.raises(ScenarioError) as err:
        keras_probe.refuse_missing_keras(client, "upgrade", "acme/job:1", {"1"})
    assert "upgrade: TF_USE_LEGACY_KERAS=1 asks for tf-keras" in err.value.message and "acme/job:1" in err.value.message
    assert "pip install tf-keras" in err.value.hint
    image, kwargs = client.runs[0]
    assert kwargs["network_disabled"] and kwargs["remove"] and kwargs["labels"]["io.tfchaos.project"] == "tfchaos"
    keras_probe.refuse_missing_keras(client, "upgrade", "acme/job:1", {"0"})  # Keras 3 it has
    assert len(client.runs) == 1  # one probe per image


def test_nothing_asked_no_probe_and_an_image_without_python_is_not_judged(monkeypatch):
    monkeypatch.setattr(keras_probe, "_cache", {})
    client = FakeClient(RuntimeError("exec: python3: not found"))
    keras_probe.refuse_missing_keras(client, "s", "acme/job:1", set())
    assert client.runs == []
    keras_probe.refuse_missing_keras(client, "s", "acme/job:1", {"1"})  # the job will show it
    assert len(client.runs) == 1
