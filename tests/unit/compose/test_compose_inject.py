"""`chaos compose --inject`: one fault, by hand, on the compose cluster (unit part:
parsing, and inject-then-always-heal against a fake cluster)."""

from __future__ import annotations

import threading

import pytest
from fake_backend import FakeCluster

from chaos.backends.abilities import (
    Freezing,
    Partitions,
    ProxyLinks,
    ResourceLimits,
    UnsupportedVerb,
    WorkerCommands,
    serves,
)
from chaos.compose.control import NOT_HERE, ComposeControl
from chaos.compose.inject import inject_for, parse_fault
from chaos.errors import ScenarioError


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


@pytest.mark.parametrize(
    "text, said",
    [
        ("node_lost: {worker: 1}", "needs `lose_node` (a compose cluster runs on one Docker host, one node)"),
        ("packet_loss: {worker: 1, percent: 5}", "needs `netns` (packet faults need the network helper image"),
        ("corrupt_checkpoint: {}", "needs `the run's backup volume` (a scenario run owns and sizes it)"),
    ],
)
def test_faults_needing_what_only_a_scenario_run_has_are_refused_by_type_before_they_act(text, said):
    control, told = ComposeControl({}, say=lambda e: None), []
    with pytest.raises(UnsupportedVerb) as caught:
        inject_for(parse_fault(text), control, 0.01, told.append)
    assert said in caught.value.message and "does not offer" in caught.value.message
    assert "chaos run" in caught.value.render() and caught.value.exit_code == 2
    assert told == []  # nothing injected, nothing to heal


def test_what_a_compose_cluster_serves_it_implements_and_nothing_more():
    assert all(serves(ComposeControl, a) for a in (ProxyLinks, Partitions, Freezing, ResourceLimits, WorkerCommands))
    assert not any(serves(ComposeControl, a) for a in NOT_HERE)
    control = ComposeControl({}, say=lambda e: None)
    with pytest.raises(ScenarioError, match="has no worker-3"):
        control.container(3)


def test_the_tf_config_of_a_compose_worker_is_the_one_it_was_created_with():
    class Container:
        attrs = {"Config": {"Env": ["PATH=/bin", 'TF_CONFIG={"cluster": {"worker": ["proxy:23600"]}}']}}

        def reload(self):
            pass

    control = ComposeControl({"worker-0": Container()}, say=lambda e: None)
    assert control.tf_config(0) == '{"cluster": {"worker": ["proxy:23600"]}}'
    Container.attrs = {"Config": {"Env": ["PATH=/bin"]}}
    with pytest.raises(ScenarioError, match="created without TF_CONFIG"):
        control.tf_config(0)
