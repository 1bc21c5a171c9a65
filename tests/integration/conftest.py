"""Integration fixtures: real Docker, real TensorFlow, the real proxy.

Images are built once per session (reused when their inputs did not change).
After every test, nothing that any run created may be left: containers,
networks and volumes carrying a run label.
"""

from __future__ import annotations

import pytest



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


def leftovers(client) -> list[str]:
    """Every run-labelled container, network and volume still present."""
    from chaos.cluster.docker_api import list_labelled

    return list_labelled(client, any_run=True)


@pytest.fixture(autouse=True)
def nothing_left_behind(request, docker_client):
    yield
    left = leftovers(docker_client)
    if left:
        from chaos.cluster import docker_api

        docker_api.remove_labelled(docker_client, {})  # keep the next test clean
        pytest.fail(f"{request.node.name} left Docker objects behind: {left}")
