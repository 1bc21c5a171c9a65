"""Bad input gets a 4xx JSON error naming the field and the valid values, and
never disturbs another proxy."""

from __future__ import annotations

import socket

import pytest
import requests
from proxy_helpers import IO_TIMEOUT, addr, serves

T = IO_TIMEOUT


@pytest.fixture
def bystander(make_proxy):
    """A healthy proxy that must keep serving through every bad request."""
    name, port = make_proxy("bystander")
    assert serves(port)
    return port


@pytest.fixture
def target(api, echo_addr):
    r = requests.post(api + "/proxies", json={"name": "target", "upstream": addr(echo_addr)}, timeout=T)
    assert r.status_code == 201
    requests.post(api + "/proxies/target/toxics", json={"type": "latency", "attributes": {"latency": 1}}, timeout=T)
    return "target"


def check(r: requests.Response, status: int, field: str | None = None, valid=None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    assert body["status"] == status and isinstance(body["error"], str) and body["error"]
    if field is not None:
        assert body["field"] == field, body
    if valid is not None:
        assert set(valid) <= set(body["valid"]), body
    return body


TOXIC_CASES = [
    # (body, field, valid values that must be listed)
    ({"type": "nope"}, "type", ["latency", "bandwidth", "slow_close", "timeout", "reset_peer", "slicer", "limit_data"]),
    ({"type": 5}, "type", ["latency"]),
    ({"type": "latency", "stream": "sideways", "attributes": {"latency": 1}}, "stream", ["upstream", "downstream"]),
    ({"type": "latency"}, "attributes.latency", ["latency", "jitter"]),
    ({"type": "latency", "attributes": {"latency": -1}}, "attributes.latency", None),
    ({"type": "latency", "attributes": {"latency": "100"}}, "attributes.latency", None),
    ({"type": "latency", "attributes": {"latency": 1.5}}, "attributes.latency", None),
    ({"type": "latency", "attributes": {"latency": True}}, "attributes.latency", None),
    ({"type": "latency", "attributes": {"latency": 10**30}}, "attributes.latency", None),
    ({"type": "latency", "attributes": {"latency": 1, "lag": 2}}, "attributes.lag", ["latency", "jitter"]),
    ({"type": "latency", "attributes": [1]}, "attributes", ["latency", "jitter"]),
    ({"type": "bandwidth", "attributes": {"rate": 0}}, "attributes.rate", None),
    (
        {"type": "slicer", "attributes": {"average_size": 10, "size_variation": 10}},
        "attributes",
        ["average_size", "size_variation", "delay"],
    ),
    ({"type": "timeout", "attributes": {}}, "attributes.timeout", ["timeout"]),
    ({"type": "limit_data", "attributes": {"bytes": -5}}, "attributes.bytes", None),
    ({"type": "latency", "toxicity": 1.5, "attributes": {"latency": 1}}, "toxicity", None),
    ({"type": "latency", "toxicity": -0.1, "attributes": {"latency": 1}}, "toxicity", None),
    ({"type": "latency", "toxicity": "high", "attributes": {"latency": 1}}, "toxicity", None),
    ({"type": "latency", "name": "a/b", "attributes": {"latency": 1}}, "name", None),
    ({"type": "latency", "name": 7, "attributes": {"latency": 1}}, "name", None),
]


@pytest.mark.parametrize("body,field,valid", TOXIC_CASES)
def test_bad_toxic(api, bystander, target, body, field, valid):
    check(requests.post(f"{api}/proxies/target/toxics", json=body, timeout=T), 400, field, valid)
    assert serves(bystander)


def test_bad_toxic_update(api, bystander, target):
    url = f"{api}/proxies/target/toxics/latency_downstream"
    check(requests.patch(url, json={"attributes": {"latency": -3}}, timeout=T), 400, "attributes.latency")
    check(requests.post(url, json={"toxicity": 2}, timeout=T), 400, "toxicity")
    check(requests.post(url, json={"stream": "upstream"}, timeout=T), 400, "stream", ["downstream"])
    check(requests.post(url, data=b"{", timeout=T), 400, "body")
    check(requests.post(url, json=[], timeout=T), 400)
    check(requests.post(f"{api}/proxies/target/toxics/ghost", json={}, timeout=T), 404, "toxic")
    assert requests.get(url, timeout=T).json()["attributes"]["latency"] == 1  # unchanged
    assert serves(bystander)


PROXY_CASES = [
    ({"upstream": "127.0.0.1:1"}, "name"),
    ({"name": "", "upstream": "127.0.0.1:1"}, "name"),
    ({"name": "n"}, "upstream"),
    ({"name": "n", "upstream": "nohostport"}, "upstream"),
    ({"name": "n", "upstream": "127.0.0.1:0"}, "upstream"),
    ({"name": "n", "upstream": "127.0.0.1:99999"}, "upstream"),
    ({"name": "n", "upstream": "no-such-host.invalid:80"}, "upstream"),
    ({"name": "n", "upstream": "127.0.0.1:1", "listen": "127.0.0.1:http"}, "listen"),
    ({"name": "n", "upstream": "127.0.0.1:1", "listen": "no-such-host.invalid:0"}, "listen"),
    ({"name": "n", "upstream": "127.0.0.1:1", "listen": "10.255.255.1:0"}, "listen"),
    ({"name": "n", "upstream": "127.0.0.1:1", "enabled": "yes"}, "enabled"),
    ({"name": ["n"], "upstream": "127.0.0.1:1"}, "name"),
]


@pytest.mark.parametrize("body,field", PROXY_CASES)
def test_bad_proxy(api, bystander, body, field):
    check(requests.post(api + "/proxies", json=body, timeout=T), 400, field)
    assert "n" not in requests.get(api + "/proxies", timeout=T).json()
    assert serves(bystander)


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff\xfe", b"[1, 2]", b"null", b"42"])
def test_malformed_json(api, bystander, raw):
    check(requests.post(api + "/proxies", data=raw, timeout=T), 400)
    check(requests.post(api + "/populate", data=raw, timeout=T), 400)
    assert serves(bystander)


def test_listen_port_in_use(api, bystander, echo_addr):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        body = check(
            requests.post(
                api + "/proxies", json={"name": "n", "upstream": addr(echo_addr), "listen": listen}, timeout=T
            ),
            400,
            "listen",
        )
        assert "in use" in body["error"] and body["hint"]
        # Moving an existing proxy onto it fails too, and the proxy keeps its old port.
        r = requests.post(f"{api}/proxies/bystander", json={"listen": listen}, timeout=T)
        check(r, 400, "listen")
    finally:
        taken.close()
    assert serves(bystander)


def test_duplicates_are_409(api, bystander, target, echo_addr):
    check(requests.post(api + "/proxies", json={"name": "target", "upstream": addr(echo_addr)}, timeout=T), 409, "name")
    check(
        requests.post(
            f"{api}/proxies/target/toxics", json={"type": "latency", "attributes": {"latency": 2}}, timeout=T
        ),
        409,
        "name",
    )
    assert serves(bystander)


def test_unknown_proxy_or_toxic_is_404(api, bystander, target):
    for method, path in [
        ("GET", "/proxies/ghost"),
        ("POST", "/proxies/ghost"),
        ("PATCH", "/proxies/ghost"),
        ("DELETE", "/proxies/ghost"),
        ("GET", "/proxies/ghost/toxics"),
        ("POST", "/proxies/ghost/toxics"),
        ("GET", "/proxies/ghost/toxics/x"),
        ("GET", "/proxies/target/toxics/ghost"),
        ("DELETE", "/proxies/target/toxics/ghost"),
        ("PATCH", "/proxies/target/toxics/ghost"),
    ]:
        check(requests.request(method, api + path, json={}, timeout=T), 404)
    assert serves(bystander)


def test_populate_errors(api, bystander, echo_addr):
    body = check(
        requests.post(
            api + "/populate", json=[{"name": "ok", "upstream": addr(echo_addr)}, {"name": "bad"}], timeout=T
        ),
        400,
        "proxies[1].upstream",
    )
    assert "ok" not in requests.get(api + "/proxies", timeout=T).json()  # validated before creating any
    check(
        requests.post(api + "/populate", json=[{"name": "d", "upstream": addr(echo_addr)}] * 2, timeout=T), 400, "name"
    )
    check(requests.post(api + "/populate", json={"name": "x"}, timeout=T), 400, "body")
    assert body["error"]
    assert serves(bystander)
