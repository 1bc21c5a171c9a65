"""A DOCKER_HOST that does not answer: one error naming the address and what failed,
within the bounded wait (chaos.images.engine.docker_client), never a traceback."""

from __future__ import annotations

import socket
import time

import pytest

from chaos.backends.docker import api as docker_api
from chaos.errors import InfrastructureError
from chaos.images import engine


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture
def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("connect", [engine.docker_client, docker_api.connect])
def test_an_engine_that_accepts_and_never_answers_fails_within_the_wait(monkeypatch, silent_port, connect):
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{silent_port}")
    monkeypatch.setenv(engine.CONNECT_TIMEOUT_ENV, "1.5")
    t0 = time.monotonic()
    with pytest.raises(InfrastructureError) as err:
        connect()
    assert time.monotonic() - t0 < 6  # the SDK version probe and the ping: each bounded by 1.5 s
    assert err.value.message == (
        f"cannot reach the Docker engine at tcp://127.0.0.1:{silent_port} (DOCKER_HOST): "
        "it accepted the connection but did not answer within 1.5 s"
    )
    assert engine.CONNECT_TIMEOUT_ENV in err.value.hint and "Traceback" not in err.value.render()


def test_a_closed_port_is_refused_at_once(monkeypatch, closed_port):
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{closed_port}")
    t0 = time.monotonic()
    with pytest.raises(InfrastructureError) as err:
        engine.docker_client()
    assert time.monotonic() - t0 < 5
    assert err.value.message == (
        f"cannot reach the Docker engine at tcp://127.0.0.1:{closed_port} (DOCKER_HOST): "
        "the connection was refused (nothing listens there)"
    )


def test_a_socket_path_that_does_not_exist_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    with pytest.raises(InfrastructureError) as err:
        engine.docker_client()
    assert err.value.message == (
        f"cannot reach the Docker engine at unix://{tmp_path}/none.sock (DOCKER_HOST): no socket at that path"
    )


@pytest.mark.parametrize("text", ["soon", "0", "-3", "99999"])
def test_a_bad_wait_is_named_with_its_valid_values(monkeypatch, text):
    monkeypatch.setenv(engine.CONNECT_TIMEOUT_ENV, text)
    with pytest.raises(InfrastructureError) as err:
        engine.connect_timeout()
    assert f"{engine.CONNECT_TIMEOUT_ENV}={text!r} is not a number of seconds between 0 and 3600" == err.value.message
