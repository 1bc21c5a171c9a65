"""An engine too old for a feature: refused at connect, one error naming its address, its
version and the version needed, before anything is made on it (chaos.images.engine)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chaos.errors import InfrastructureError
from chaos.images import engine


def fake_engine(api: str, version: str):
    """A loopback HTTP server answering the Docker API's /_ping and /version as an engine of
    ``api`` does, and recording every other request (which must not come)."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            path = self.path.split("?")[0]
            if path.endswith("/_ping"):
                body, kind = b"OK", "text/plain"
            elif path.endswith("/version"):
                body = json.dumps({"ApiVersion": api, "Version": version, "MinAPIVersion": "1.12"}).encode()
                kind = "application/json"
            else:
                asked.append(f"GET {path}")
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Api-Version", api)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):  # noqa: N802
            asked.append(f"POST {self.path}")
            self.send_error(500)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


@pytest.fixture
def old_engine():
    server, asked = fake_engine("1.40", "19.03.15")
    yield f"tcp://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()


def test_an_engine_older_than_the_minimum_is_refused_naming_it(monkeypatch, old_engine):
    address, asked = old_engine
    monkeypatch.setenv("DOCKER_HOST", address)
    with pytest.raises(InfrastructureError) as err:
        engine.docker_client()
    assert err.value.message == (
        f"the Docker engine at {address} (DOCKER_HOST) is too old: Docker 19.03.15, API 1.40; tfchaos needs "
        "API 1.41 (Docker 20.10) or newer (one-shot container stats for memory faults, a platform on container create)"
    )
    assert f"docker -H {address} version" in err.value.hint
    assert asked == []  # nothing was asked of it beyond ping and version: nothing made there


def test_an_engine_at_the_minimum_connects():
    server, asked = fake_engine("1.41", "20.10.24")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{server.server_address[1]}")
            assert engine.docker_client() is not None
        assert asked == []
    finally:
        server.shutdown()


@pytest.mark.parametrize("text, parsed", [("1.41", (1, 41)), ("1.9", (1, 9)), ("", None), ("x.y", None)])
def test_api_versions_compare_as_numbers(text, parsed):
    assert engine.api_version_of(text) == parsed
    if parsed:
        assert (parsed >= engine.MIN_API_VERSION) == (parsed >= (1, 41))


def test_the_cli_says_it_in_one_line_with_no_traceback(old_engine):
    address, asked = old_engine
    done = subprocess.run(
        [sys.executable, "-m", "chaos", "images", "status"],
        env={"DOCKER_HOST": address, "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "is too old: Docker 19.03.15, API 1.40" in done.stderr and "Traceback" not in done.stderr
    assert asked == []
