"""Every endpoint over raw HTTP: shapes and status codes as the official server."""

from __future__ import annotations

import requests
from proxy_helpers import IO_TIMEOUT, addr, port_of

T = IO_TIMEOUT


def test_version(api):
    r = requests.get(api + "/version", timeout=T)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    assert r.json()["version"].startswith("2.")


def test_proxy_lifecycle_shapes(api, echo_addr):
    assert requests.get(api + "/proxies", timeout=T).json() == {}
    r = requests.post(
        api + "/proxies", json={"name": "web", "listen": "127.0.0.1:0", "upstream": addr(echo_addr)}, timeout=T
    )
    assert r.status_code == 201
    body = r.json()
    assert set(body) == {"name", "listen", "upstream", "enabled", "toxics"}
    assert body["name"] == "web" and body["enabled"] is True and body["toxics"] == []
    assert body["listen"].startswith("127.0.0.1:") and port_of(body["listen"]) > 0
    assert requests.get(api + "/proxies", timeout=T).json() == {"web": body}
    assert requests.get(api + "/proxies/web", timeout=T).json() == body

    r = requests.post(api + "/proxies/web", json={"enabled": False}, timeout=T)
    assert r.status_code == 200 and r.json()["enabled"] is False and r.json()["listen"] == body["listen"]
    r = requests.patch(api + "/proxies/web", json={"enabled": True}, timeout=T)
    assert r.status_code == 200 and r.json()["enabled"] is True

    r = requests.delete(api + "/proxies/web", timeout=T)
    assert r.status_code == 204 and r.content == b""
    assert requests.get(api + "/proxies/web", timeout=T).status_code == 404
    assert requests.delete(api + "/proxies/web", timeout=T).status_code == 404


def test_proxy_update_listen_and_upstream(api, echo_addr, sink_addr):
    requests.post(api + "/proxies", json={"name": "u", "listen": "127.0.0.1:0", "upstream": addr(echo_addr)}, timeout=T)
    r = requests.patch(api + "/proxies/u", json={"upstream": addr(sink_addr)}, timeout=T)
    assert r.status_code == 200 and r.json()["upstream"] == addr(sink_addr)
    old = r.json()["listen"]
    r = requests.post(api + "/proxies/u", json={"listen": "127.0.0.1:0"}, timeout=T)
    assert r.status_code == 200 and r.json()["listen"] != old


def test_create_disabled(api, echo_addr):
    r = requests.post(api + "/proxies", json={"name": "off", "upstream": addr(echo_addr), "enabled": False}, timeout=T)
    assert r.status_code == 201 and r.json()["enabled"] is False


def test_populate(api, echo_addr):
    items = [{"name": f"pop{i}", "listen": "127.0.0.1:0", "upstream": addr(echo_addr)} for i in range(3)]
    r = requests.post(api + "/populate", json=items, timeout=T)
    assert r.status_code == 201
    proxies = r.json()["proxies"]
    assert [p["name"] for p in proxies] == ["pop0", "pop1", "pop2"]
    assert all(p["enabled"] and p["toxics"] == [] for p in proxies)
    assert requests.post(api + "/populate", json=[], timeout=T).json() == {"proxies": []}


def test_toxic_lifecycle_shapes(api, echo_addr):
    requests.post(api + "/proxies", json={"name": "tx", "upstream": addr(echo_addr)}, timeout=T)
    r = requests.post(api + "/proxies/tx/toxics", json={"type": "latency", "attributes": {"latency": 50}}, timeout=T)
    assert r.status_code == 200
    toxic = r.json()
    assert toxic == {
        "name": "latency_downstream",
        "type": "latency",
        "stream": "downstream",
        "toxicity": 1.0,
        "attributes": {"latency": 50, "jitter": 0},
    }
    r = requests.post(
        api + "/proxies/tx/toxics",
        timeout=T,
        json={"name": "cut", "type": "limit_data", "stream": "upstream", "toxicity": 0.25, "attributes": {"bytes": 10}},
    )
    assert r.status_code == 200 and r.json()["stream"] == "upstream"
    listed = requests.get(api + "/proxies/tx/toxics", timeout=T).json()
    assert [t["name"] for t in listed] == ["cut", "latency_downstream"]  # upstream chain first
    assert requests.get(api + "/proxies/tx", timeout=T).json()["toxics"] == listed
    assert requests.get(api + "/proxies/tx/toxics/cut", timeout=T).json()["attributes"] == {"bytes": 10}

    r = requests.post(api + "/proxies/tx/toxics/latency_downstream", json={"attributes": {"jitter": 5}}, timeout=T)
    assert r.status_code == 200 and r.json()["attributes"] == {"latency": 50, "jitter": 5}
    r = requests.patch(api + "/proxies/tx/toxics/latency_downstream", json={"toxicity": 0.5}, timeout=T)
    assert r.status_code == 200 and r.json()["toxicity"] == 0.5 and r.json()["attributes"]["jitter"] == 5

    r = requests.delete(api + "/proxies/tx/toxics/cut", timeout=T)
    assert r.status_code == 204 and r.content == b""
    assert requests.get(api + "/proxies/tx/toxics/cut", timeout=T).status_code == 404
    assert requests.delete(api + "/proxies/tx/toxics/cut", timeout=T).status_code == 404


def test_every_toxic_type_with_defaults(api, echo_addr):
    requests.post(api + "/proxies", json={"name": "all", "upstream": addr(echo_addr)}, timeout=T)
    minimal = {
        "latency": {"latency": 1},
        "bandwidth": {"rate": 1},
        "slow_close": {"delay": 1},
        "timeout": {"timeout": 0},
        "reset_peer": {},
        "slicer": {"average_size": 8},
        "limit_data": {"bytes": 1},
    }
    for kind, attrs in minimal.items():
        r = requests.post(api + "/proxies/all/toxics", json={"type": kind, "attributes": attrs}, timeout=T)
        assert r.status_code == 200, r.text
        assert r.json()["name"] == f"{kind}_downstream"
    got = {t["type"]: t["attributes"] for t in requests.get(api + "/proxies/all/toxics", timeout=T).json()}
    assert got["slicer"] == {"average_size": 8, "size_variation": 0, "delay": 0}
    assert got["reset_peer"] == {"timeout": 0}


def test_reset(api, echo_addr):
    for name in ("x", "y"):
        requests.post(api + "/proxies", json={"name": name, "upstream": addr(echo_addr)}, timeout=T)
    requests.post(api + "/proxies/x/toxics", json={"type": "latency", "attributes": {"latency": 5}}, timeout=T)
    requests.post(api + "/proxies/y", json={"enabled": False}, timeout=T)
    r = requests.post(api + "/reset", timeout=T)
    assert r.status_code == 204 and r.content == b""
    proxies = requests.get(api + "/proxies", timeout=T).json()
    assert all(p["enabled"] and p["toxics"] == [] for p in proxies.values())


def test_unknown_route_and_method_are_json(api):
    r = requests.get(api + "/nope", timeout=T)
    assert r.status_code == 404 and r.json()["status"] == 404
    r = requests.put(api + "/proxies", timeout=T)
    assert r.status_code == 405 and set(r.json()["valid"]) >= {"GET", "POST"}
