"""`chaos compose --inject`: one fault, by hand, on the compose cluster (unit part:
parsing, and inject-then-always-heal against a fake cluster)."""

from __future__ import annotations

import threading

import pytest

from chaos.compose.control import ComposeControl, UnsupportedVerb
from chaos.compose.inject import inject_for, parse_fault
from chaos.errors import ScenarioError
from fake_backend import FakeCluster


def test_a_fault_is_written_as_in_a_scenario():
    fault = parse_fault("latency: {worker: 1, latency_ms: 100}")
    assert fault.name == "latency" and fault.params()["latency_ms"] == 100
    assert parse_fault("kill_worker: {worker: 1}").target == "worker-1"


@pytest.mark.parametrize(
    "text, said",
    [
        ("latncy: {worker: 1}", "did you mean 'latency'"),
        ("latency: {worker: 1, latency_ms: -5}", "latency_ms: must be >= 0 (got -5)"),
        ("latency: {worker: 1, jitter: x, bogus: 1}", "bogus"),
        ("{latency: {worker: 1}, pause_worker: {worker: 1}}", "takes one fault"),
        ("tf_config: {mode: wrong_port}", "changes how workers are created"),
        ("[1, 2", "not valid YAML"),
    ],
)
def test_bad_faults_are_refused_naming_what_is_wrong(text, said):
    with pytest.raises(ScenarioError) as caught:
        parse_fault(text)
    assert said in caught.value.render()


def test_the_fault_is_healed_when_its_time_runs_out():
    cluster, said = FakeCluster(), []
    inject_for(parse_fault("pause_worker: {worker: 1}"), cluster, 0.05, said.append)
    assert cluster.calls == [("pause", 1), ("unpause", 1)]
    assert said == ["FAULT pause_worker on worker-1 injected", "FAULT pause_worker on worker-1 healed"]


def test_the_fault_is_healed_on_ctrl_c():
    class Interrupted(threading.Event):
        def wait(self, timeout=None):
            raise KeyboardInterrupt

    cluster = FakeCluster()
    inject_for(parse_fault("pause_worker: {worker: 0}"), cluster, None, lambda _: None, stop=Interrupted())
    assert cluster.calls == [("pause", 0), ("unpause", 0)]


def test_verbs_only_a_scenario_run_has_are_refused_with_what_to_do_instead():
    control = ComposeControl({}, say=lambda e: None)
    with pytest.raises(UnsupportedVerb) as caught:
        control.override(1, "fault", image="x")
    assert "does not offer" in str(caught.value) and "chaos run" in caught.value.render()
    with pytest.raises(ScenarioError, match="has no worker-3"):
        control.container(3)
