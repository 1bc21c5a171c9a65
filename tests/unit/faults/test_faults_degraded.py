"""The degraded-link faults: one named toxic per stream, the attributes the
proxy's toxic expects, a heal that removes exactly what the inject added."""

import pytest
from fake_backend import FakeCluster
from pydantic import ValidationError

from chaos.faults import ConnectionReset, OneWayBlackhole, Sliced, SlowClose, StreamCut
from chaos.faults.undo import Undo

CASES = [
    (ConnectionReset(worker=1, timeout_ms=250), "reset_peer", {"timeout": 250}),
    (StreamCut(worker=1, limit_bytes=4096), "limit_data", {"bytes": 4096}),
    (SlowClose(worker=1, delay_ms=3000), "slow_close", {"delay": 3000}),
    (
        Sliced(worker=1, average_bytes=64, variation_bytes=16, delay_us=500),
        "slicer",
        {"average_size": 64, "size_variation": 16, "delay": 500},
    ),
]


@pytest.mark.parametrize("fault, toxic, attributes", CASES, ids=lambda v: getattr(v, "name", None))
def test_each_fault_is_its_toxic_on_both_streams_and_heals_to_nothing(fault, toxic, attributes):
    undo = Undo()
    cluster = FakeCluster()
    fault.inject(cluster, undo)
    toxics = cluster.proxies[1].toxics()
    assert sorted(toxics) == [f"chaos_{fault.name}_downstream", f"chaos_{fault.name}_upstream"]
    assert all(t.type == toxic and t.attributes == attributes for t in toxics.values())
    assert cluster.proxies[0].toxics() == {}
    undo(cluster)
    undo(cluster)
    assert cluster.proxies[1].toxics() == {}


def test_a_one_way_blackhole_holds_one_stream_and_names_it():
    undo = Undo()
    cluster = FakeCluster()
    fault = OneWayBlackhole(worker=0, stream="downstream")
    fault.inject(cluster, undo)
    (toxic,) = cluster.proxies[0].toxics().values()
    assert (toxic.type, toxic.stream, toxic.attributes) == ("timeout", "downstream", {"timeout": 0})
    undo(cluster)
    assert cluster.proxies[0].toxics() == {}


def test_a_blackhole_must_say_its_direction():
    with pytest.raises(ValidationError) as err:
        OneWayBlackhole(worker=0)
    assert "stream" in str(err.value)


@pytest.mark.parametrize(
    "make",
    [
        lambda: StreamCut(worker=1, limit_bytes=0),
        lambda: ConnectionReset(worker=1, timeout_ms=-1),
        lambda: Sliced(worker=1, average_bytes=0),
        lambda: SlowClose(worker=1, delay_ms=10, stream="sideways"),
    ],
)
def test_out_of_range_parameters_are_refused(make):
    with pytest.raises(ValidationError):
        make()
