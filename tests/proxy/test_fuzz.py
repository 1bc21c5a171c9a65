"""Property-based fuzz of the API: random methods, paths and JSON bodies (of
right and wrong types) never get a 5xx or crash the server."""

from __future__ import annotations

import json

import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from proxy_helpers import IO_TIMEOUT, addr, serves

NAMES = st.sampled_from(["fz", "ghost", "latency_downstream", "t1", "", "%20", "a b", "ü"])
PATHS = st.one_of(
    st.sampled_from(["/version", "/proxies", "/populate", "/reset", "/", "/proxies/", "/metrics"]),
    st.builds(lambda p: f"/proxies/{p}", NAMES),
    st.builds(lambda p: f"/proxies/{p}/toxics", NAMES),
    st.builds(lambda p, t: f"/proxies/{p}/toxics/{t}", NAMES, NAMES),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "127.0.0.1:0",
            "localhost:1",
            "[::1]:0",
            ":0",
            "no-such-host.invalid:1",
            "upstream",
            "downstream",
            "latency",
            "bandwidth",
            "slicer",
            "timeout",
            "limit_data",
            "reset_peer",
            "slow_close",
        ]
    ),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
KEYS = st.sampled_from(
    [
        "name",
        "type",
        "stream",
        "toxicity",
        "attributes",
        "listen",
        "upstream",
        "enabled",
        "latency",
        "jitter",
        "rate",
        "delay",
        "timeout",
        "bytes",
        "average_size",
        "size_variation",
    ]
)
OBJECTS = st.dictionaries(KEYS, st.one_of(SCALARS, st.dictionaries(KEYS, SCALARS, max_size=3)), max_size=6)
BODIES = st.one_of(st.none(), JSON, OBJECTS, st.lists(OBJECTS, max_size=2), st.binary(max_size=20))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"]), path=PATHS, body=BODIES)
def _fuzz(api, upstream, method, path, body):
    # Keep a real proxy named "fz" around so paths under it reach the handlers.
    if requests.get(api + "/proxies/fz", timeout=IO_TIMEOUT).status_code == 404:
        requests.post(api + "/proxies", json={"name": "fz", "upstream": upstream}, timeout=IO_TIMEOUT)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()  # NaN/Infinity too
    r = requests.request(method, api + path, data=data, timeout=IO_TIMEOUT)
    assert r.status_code < 500, (method, path, body, r.text)
    if r.status_code >= 400 and method != "HEAD":
        err = r.json()
        assert err["status"] == r.status_code and err["error"]


def test_api_fuzz_no_5xx_then_server_still_works(api, make_proxy, echo_addr):
    _fuzz(api, addr(echo_addr))
    requests.post(api + "/reset", timeout=IO_TIMEOUT)
    _, port = make_proxy("after_fuzz")
    assert serves(port)
    assert requests.get(api + "/proxies/after_fuzz", timeout=IO_TIMEOUT).json()["upstream"] == addr(echo_addr)
