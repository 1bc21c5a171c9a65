"""Integration fixtures: real Docker, real TensorFlow, the real proxy.

Images are built once per session (reused when their inputs did not change).
After every test, nothing that a run the test created may be left: containers,
networks and volumes carrying its run label (run_scope.py). Runs that existed
before the test (another test session's, a user's `chaos run`) are left alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# --import-mode=importlib keeps test folders off sys.path; conftest shares run_scope.py.
sys.path.insert(0, str(Path(__file__).parent))
from run_scope import new_runs, objects_of, remove_runs, run_ids  # noqa: E402


@pytest.fixture(scope="session")
def docker_client():
    from chaos.cluster import docker_api

    return docker_api.connect()


@pytest.fixture(scope="session")
def images(docker_client):
    """Build (or reuse) the default worker image and the proxy image."""
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag

    ensure_images(("2.20",), progress=lambda msg: print(f"[images] {msg}", flush=True))
    return {"worker": worker_image_tag("2.20"), "proxy": PROXY_IMAGE}


@pytest.fixture(autouse=True)
def nothing_left_behind(request, docker_client):
    """Fail a test whose runs left objects behind (naming them), and remove
    those, only those: runs already present when the test started are not its own."""
    before = run_ids(docker_client)
    yield
    runs = new_runs(before, run_ids(docker_client))
    left = objects_of(docker_client, runs)
    if left:
        remove_runs(docker_client, runs)  # keep the next test clean
        pytest.fail(f"{request.node.name} left Docker objects behind: {left}")
