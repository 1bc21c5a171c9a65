"""device_oom, host_oom, cpu_throttle against a fake ClusterControl."""

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.faults import FAULTS, CpuThrottle, DeviceOOM, HostOOM
from chaos.faults.resources import MB
from chaos.faults.undo import Undo
from chaos.worker.control import MemoryDemand

LIFT = ("command", 1, MemoryDemand(0))


@pytest.fixture
def cluster():
    return FakeCluster(num_slots=2, usage_bytes=300 * MB)


# --- device_oom ---------------------------------------------------------------


def test_device_oom_sends_the_demand_and_the_cap(cluster):
    undo = Undo()
    DeviceOOM(worker=1, device_memory_mb=512, demand_mb=2048).inject(cluster, undo)
    assert cluster.calls == [("command", 1, MemoryDemand(2048, cap_mb=512))]


def test_device_oom_heal_lifts_the_demand_once(cluster):
    undo = Undo()
    fault = DeviceOOM(worker=1)
    fault.inject(cluster, undo)
    undo(cluster)
    undo(cluster)
    assert cluster.calls[1:] == [LIFT]


def test_device_oom_heal_does_nothing_when_never_injected(cluster):
    undo = Undo()
    undo(cluster)
    assert cluster.calls == []


def test_device_oom_heal_sends_nothing_to_a_worker_that_died_of_it(cluster):
    undo = Undo()
    fault = DeviceOOM(worker=1)
    fault.inject(cluster, undo)
    cluster.running.discard(1)  # ResourceExhaustedError ended the process
    undo(cluster)
    assert [c for c in cluster.calls if c[0] == "command"] == [cluster.calls[0]]


def test_device_oom_heal_does_nothing_after_a_failed_inject(cluster):
    undo = Undo()
    cluster.fail["command"] = RuntimeError("command failed (fake engine error)")
    fault = DeviceOOM(worker=1)
    with pytest.raises(RuntimeError):
        fault.inject(cluster, undo)
    cluster.fail.clear()
    undo(cluster)
    assert len(cluster.calls) == 1  # only the failed inject


@pytest.mark.parametrize("demand, device", [(512, 512), (100, 512)])
def test_device_oom_demand_must_exceed_the_device(demand, device):
    with pytest.raises(ValidationError, match=rf"demand_mb \({demand}\) must exceed device_memory_mb \({device}\)"):
        DeviceOOM(worker=1, demand_mb=demand, device_memory_mb=device)
    assert DeviceOOM(worker=1, demand_mb=device + 1, device_memory_mb=device).demand_mb == device + 1


def test_device_oom_rejects_bad_parameters():
    # A worker beyond the scenario's cluster is the scenario's to refuse (tests/unit/scenario/test_worker_bounds.py).
    for bad in ({"device_memory_mb": 8}, {"demand_mb": 0}, {"worker": -1}, {"worker": "one"}):
        with pytest.raises(ValidationError):
            DeviceOOM(**{"worker": 1, **bad})


# --- host_oom -----------------------------------------------------------------


def test_host_oom_limits_the_container_to_its_use_plus_headroom_then_demands_more(cluster):
    undo = Undo()
    HostOOM(worker=1, headroom_mb=256, demand_mb=1024).inject(cluster, undo)
    limit = 300 * MB + 256 * MB
    assert cluster.calls == [
        ("memory_usage", 1),
        ("limit_memory", 1, limit),
        ("command", 1, MemoryDemand(1024)),
    ]


def test_host_oom_heal_lifts_demand_and_limit_on_a_running_worker_once(cluster):
    undo = Undo()
    fault = HostOOM(worker=1)
    fault.inject(cluster, undo)
    del cluster.calls[:]
    undo(cluster)
    undo(cluster)
    assert cluster.calls == [
        LIFT,
        ("restore_memory", 1),
    ]


def test_host_oom_heal_leaves_an_oom_killed_worker_alone(cluster):
    undo = Undo()
    fault = HostOOM(worker=1)
    fault.inject(cluster, undo)
    del cluster.calls[:]
    cluster.running.discard(1)
    undo(cluster)
    assert cluster.calls == []


def test_host_oom_heal_lifts_the_limit_after_a_half_inject(cluster):
    undo = Undo()
    cluster.fail["command"] = RuntimeError(
        "command failed (fake engine error)"
    )  # the limit is set, the demand never reaches the worker
    fault = HostOOM(worker=1)
    with pytest.raises(RuntimeError):
        fault.inject(cluster, undo)
    cluster.fail.clear()
    del cluster.calls[:]
    undo(cluster)
    assert ("restore_memory", 1) in cluster.calls


def test_host_oom_heal_does_nothing_when_the_limit_was_never_set(cluster):
    undo = Undo()
    cluster.fail["memory_usage"] = RuntimeError("memory_usage failed (fake engine error)")
    fault = HostOOM(worker=1)
    with pytest.raises(RuntimeError):
        fault.inject(cluster, undo)
    cluster.fail.clear()
    del cluster.calls[:]
    undo(cluster)
    assert cluster.calls == []


def test_host_oom_demand_must_exceed_the_headroom():
    with pytest.raises(ValidationError, match=r"demand_mb \(256\) must exceed headroom_mb \(256\)"):
        HostOOM(worker=1, headroom_mb=256, demand_mb=256)
    with pytest.raises(ValidationError):
        HostOOM(worker=1, headroom_mb=8, demand_mb=100)


# --- cpu_throttle -------------------------------------------------------------


def test_cpu_throttle_limits_the_workers_cpu(cluster):
    undo = Undo()
    CpuThrottle(worker=1, cpus=0.5).inject(cluster, undo)
    assert cluster.calls == [("limit_cpu", 1, 0.5)]


def test_cpu_throttle_heal_removes_the_quota_once(cluster):
    undo = Undo()
    fault = CpuThrottle(worker=1)
    undo(cluster)  # never injected
    fault.inject(cluster, undo)
    undo(cluster)
    undo(cluster)
    assert cluster.calls == [("limit_cpu", 1, 0.1), ("restore_cpu", 1)]


def test_cpu_throttle_heal_skips_a_worker_that_is_not_running(cluster):
    undo = Undo()
    fault = CpuThrottle(worker=1)
    fault.inject(cluster, undo)
    cluster.running.discard(1)
    undo(cluster)
    assert len(cluster.calls) == 1
    cluster.running.add(1)
    undo(cluster)  # healed already: the flag was cleared
    assert len(cluster.calls) == 1


@pytest.mark.parametrize("cpus", [0, -1, 65])
def test_cpu_throttle_rejects_impossible_cpu_counts(cpus):
    with pytest.raises(ValidationError):
        CpuThrottle(worker=1, cpus=cpus)


def test_resource_faults_are_registered_in_order_and_not_create_time():
    names = FAULTS.names()
    assert names[names.index("device_oom") :][:3] == ["device_oom", "host_oom", "cpu_throttle"]
    assert not any(cls.applies_at_create for cls in (DeviceOOM, HostOOM, CpuThrottle))
    assert DeviceOOM(worker=1).target == "worker-1"
