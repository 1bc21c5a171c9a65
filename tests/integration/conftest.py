"""Integration fixtures: real Docker, real TensorFlow, the real proxy.

Without a reachable Docker engine every integration test is skipped with the
reason (not errored). Images are built once per session (reused when their
inputs did not change). After every test, nothing it created may be left on
the engine: everything is compared before and after (run_scope.py), and the
test's own leftovers are named in the failure and removed. Objects of other
sessions (another test run, a user's `chaos run`) are left alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# --import-mode=importlib keeps test folders off sys.path; conftest shares run_scope.py.
sys.path.insert(0, str(Path(__file__).parent))
from run_scope import Snapshot, leftovers, remove  # noqa: E402

from chaos.backends.docker.ownership import session_id  # noqa: E402

SESSION = session_id()  # set in the environment: subprocesses' runs carry it too


def _engine():
    from chaos.backends.docker import api as docker_api
    from chaos.errors import InfrastructureError

    try:
        return docker_api.connect(), None
    except InfrastructureError as exc:
        return None, exc.message


@pytest.fixture(scope="session")
def docker_client():
    client, problem = _engine()
    if client is None:
        pytest.skip(f"no Docker engine: {problem}")
    return client


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    integration = [i for i in items if here in Path(str(i.path)).parents]
    if not integration:
        return
    client, problem = _engine()
    if client is None:
        skip = pytest.mark.skip(reason=f"integration tests need a Docker engine: {problem}")
        for item in integration:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def images(docker_client):
    """Build (or reuse) the default worker image and the proxy image."""
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag
    from chaos.images.versions import DEFAULT_TF_VERSION

    ensure_images((DEFAULT_TF_VERSION,), progress=lambda msg: print(f"[images] {msg}", flush=True))
    return {"worker": worker_image_tag(DEFAULT_TF_VERSION), "proxy": PROXY_IMAGE}


@pytest.fixture(autouse=True)
def nothing_left_behind(request, docker_client):
    """Fail a test that left anything of its own on the engine (naming it), and
    remove those objects, only those."""
    before = Snapshot.take(docker_client)
    yield
    left = leftovers(docker_client, before, SESSION)
    if left:
        remove(docker_client, left)  # keep the next test clean
        pytest.fail(f"{request.node.name} left Docker objects behind: {[o.describe() for o in left]}")
