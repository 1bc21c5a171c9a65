"""Every call of the unmodified toxiproxy-python 0.1.1 client against our server."""

from __future__ import annotations

import json

import pytest
from proxy_helpers import addr, connect, port_of, roundtrip, wait_closed
from toxiproxy.exceptions import InvalidToxic, NotFound, ProxyExists
from toxiproxy.proxy import Proxy


def test_version_and_running(client):
    assert client.running() is True
    assert json.loads(client.version())["version"].startswith("2.")


def test_create_proxies_get_proxy_destroy(client, echo_addr):
    proxy = client.create(upstream=addr(echo_addr), name="c1")
    assert isinstance(proxy, Proxy)
    assert proxy.enabled is True and proxy.upstream == addr(echo_addr)
    assert port_of(proxy.listen) > 0  # port 0 became a real port
    assert set(client.proxies()) == {"c1"}
    assert client.get_proxy("c1").listen == proxy.listen
    assert client.get_proxy("missing") is None
    with connect(port_of(proxy.listen)) as sock:
        assert roundtrip(sock, b"ping")[0] == b"ping"
    with pytest.raises(ProxyExists):
        client.create(upstream=addr(echo_addr), name="c1")
    assert client.destroy(proxy) is True
    assert client.proxies() == {}
    with pytest.raises(NotFound):
        proxy.destroy()


def test_create_with_listen_and_disabled(client, echo_addr):
    proxy = client.create(upstream=addr(echo_addr), name="c2", listen="127.0.0.1:0", enabled=False)
    assert proxy.enabled is False
    assert client.get_proxy("c2").enabled is False


def test_populate_creates_and_replaces(client, echo_addr, sink_addr):
    made = client.populate(
        [
            {"name": "a", "upstream": addr(echo_addr), "listen": "127.0.0.1:0"},
            {"name": "b", "upstream": addr(echo_addr), "listen": "127.0.0.1:0"},
        ]
    )
    assert sorted(p.name for p in made) == ["a", "b"]
    listen_a = client.get_proxy("a").listen
    # Same listen and upstream: kept. Different upstream: replaced.
    again = client.populate(
        [
            {"name": "a", "upstream": addr(echo_addr), "listen": listen_a},
            {"name": "b", "upstream": addr(sink_addr), "listen": "127.0.0.1:0"},
        ]
    )
    assert [p.name for p in again] == ["b"]
    assert client.get_proxy("b").upstream == addr(sink_addr)
    assert client.get_proxy("a").listen == listen_a


def test_add_toxic_toxics_destroy_toxic(client, echo_addr):
    proxy = client.create(upstream=addr(echo_addr), name="t")
    proxy.add_toxic(type="latency", attributes={"latency": 10, "jitter": 2})
    proxy.add_toxic(type="bandwidth", stream="upstream", name="bw", toxicity=0.5, attributes={"rate": 100})
    toxics = proxy.toxics()
    assert set(toxics) == {"latency_downstream", "bw"}
    lat = toxics["latency_downstream"]
    assert (lat.type, lat.stream, lat.toxicity, lat.attributes) == (
        "latency",
        "downstream",
        1.0,
        {"latency": 10, "jitter": 2},
    )
    bw = proxy.get_toxic("bw")
    assert (bw.stream, bw.toxicity, bw.attributes) == ("upstream", 0.5, {"rate": 100})
    assert proxy.get_toxic("nope") is None
    with pytest.raises(ProxyExists):  # 409 for a duplicate toxic name
        proxy.add_toxic(type="latency", attributes={"latency": 1})
    with pytest.raises(InvalidToxic):  # 400
        proxy.add_toxic(type="nonsense")
    assert proxy.destroy_toxic("bw") is True
    assert set(proxy.toxics()) == {"latency_downstream"}
    with pytest.raises(NotFound):
        proxy.destroy_toxic("bw")


def test_disable_enable_down(client, echo_addr):
    proxy = client.create(upstream=addr(echo_addr), name="d")
    port = port_of(proxy.listen)
    sock = connect(port)
    assert roundtrip(sock, b"x")[0] == b"x"
    proxy.disable()
    assert client.get_proxy("d").enabled is False
    assert wait_closed(sock)[0] in ("eof", "reset")
    with pytest.raises(OSError):
        connect(port, timeout=1).close()
    proxy.enable()
    with connect(port) as sock2:
        assert roundtrip(sock2, b"y")[0] == b"y"
    with proxy.down():
        assert client.get_proxy("d").enabled is False
    assert client.get_proxy("d").enabled is True


def test_reset_and_destroy_all(client, echo_addr):
    p1 = client.create(upstream=addr(echo_addr), name="r1")
    p2 = client.create(upstream=addr(echo_addr), name="r2")
    p1.add_toxic(type="latency", attributes={"latency": 100})
    p2.disable()
    assert client.reset() is True
    assert p1.toxics() == {}
    assert client.get_proxy("r2").enabled is True
    client.destroy_all()
    assert client.proxies() == {}
