"""Entry points: ``python -m chaos.proxy`` and ``chaos proxy``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

from chaos.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chaos.proxy", *args], capture_output=True, text=True, timeout=30, env=ENV, cwd=ROOT
    )


def test_port_in_use_is_one_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = _run("--port", str(taken.getsockname()[1]))
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: cannot listen on 127.0.0.1:") and "in use" in result.stderr
    assert "\nhint: " in result.stderr


def test_bad_host_is_one_clear_error():
    result = _run("--host", "no-such-host.invalid", "--port", "0")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert "unknown host" in result.stderr and "hint:" in result.stderr


def test_serves_then_stops_cleanly_on_ctrl_c():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.proxy", "--port", str(port)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                assert requests.get(f"http://127.0.0.1:{port}/version", timeout=1).status_code == 200
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "server did not come up"
                time.sleep(0.05)
        requests.post(f"http://127.0.0.1:{port}/proxies", json={"name": "a", "upstream": "127.0.0.1:9"}, timeout=5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "Traceback" not in err
    assert "created proxy a" in err  # one log line per API change


def test_chaos_cli_has_proxy_subcommand(capsys):
    args = build_parser().parse_args(["proxy", "--host", "0.0.0.0", "--port", "1234"])
    assert (args.host, args.port) == ("0.0.0.0", 1234) and callable(args.func)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["proxy", "--port", str(taken.getsockname()[1])]) == 3
    assert "in use" in capsys.readouterr().err


def test_config_file_creates_proxies_at_start(tmp_path):
    config = tmp_path / "proxies.json"
    config.write_text('[{"name": "svc", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:9"}]')
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.proxy", "--port", str(port), "--config", str(config)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                proxies = requests.get(f"http://127.0.0.1:{port}/proxies", timeout=1).json()
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no API"
                time.sleep(0.1)
        assert proxies["svc"]["upstream"] == "127.0.0.1:9" and proxies["svc"]["enabled"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)


def test_bad_config_file_is_one_clear_error(tmp_path):
    config = tmp_path / "proxies.json"
    config.write_text('[{"name": "svc", "upstream": "127.0.0.1:9", "enabled": "yes"}]')
    result = _run("--port", str(_free_port()), "--config", str(config))
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert f"--config {config}" in result.stderr and "enabled" in result.stderr
    assert "\nhint: " in result.stderr
