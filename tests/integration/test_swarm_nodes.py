"""A multi-node Docker Swarm on this machine (chaos.backends.swarm.nodes): three
node containers with their own engines form one swarm, a task on node-2 reaches
a task on node-3 across the overlay, a file a container on node-2 writes into the
shared store is read on node-3, and nothing is left afterwards; a
bring-up interrupted half-way (Ctrl-C) leaves nothing either.

Marked ``swarm`` as well as ``integration``: in the default run (about 40 s
here with the node image built, 70 s on a fresh machine that builds it);
``-m "not swarm"`` leaves it out, ``-m swarm`` runs only it (docs/backends.md).
"""

from __future__ import annotations

import os

import pytest

from chaos.backends.swarm import nodes as swarm_nodes
from chaos.backends.swarm.nodes import LocalSwarm, local_swarm, make_plan, swarm_objects
from chaos.backends.swarm.probe import cross_node_echo

pytestmark = [pytest.mark.integration, pytest.mark.swarm]


@pytest.fixture(scope="module")
def task_image(docker_client):
    """The project's base image: the worker's and the proxy's python3, 177 MB to load
    into each node instead of the worker's 1.7 GB (the overlay is what is tested)."""
    from chaos.images.base import ensure_base

    return ensure_base(docker_client).tag


def test_a_task_on_one_node_reaches_a_task_on_another_and_nothing_is_left(docker_client, task_image):
    progress = lambda msg: print(f"[swarm] {msg}", flush=True)  # noqa: E731
    with local_swarm(nodes=3, images=[task_image], client=docker_client, progress=progress) as swarm:
        name, socket_dir = swarm.plan.name, os.path.join(swarm.plan.socket_root, swarm.plan.name)
        nodes = {n.attrs["Description"]["Hostname"]: n.attrs["Status"]["State"] for n in swarm.client(1).nodes.list()}
        assert nodes == {"node-1": "ready", "node-2": "ready", "node-3": "ready"}
        overlay = swarm.client(1).networks.get("tfchaos").attrs
        assert overlay["Driver"] == "overlay" and overlay["Attachable"]
        assert overlay["Options"]["com.docker.network.driver.mtu"] == "1400"
        reach = cross_node_echo(swarm, task_image, server=2, client=3)
        print(f"[swarm] {reach}; {' '.join(swarm.timings.lines())}")
        assert reach.ok, reach.output
        assert reach.output.startswith("echo ok 4000 bytes")
        written = shared_store_round_trip(swarm, task_image)
        assert written == "seen on node-3: written on node-2", written
    assert swarm_objects(docker_client, name) == []
    assert not os.path.exists(socket_dir)


def shared_store_round_trip(swarm, image: str) -> str:
    """A file written by a task on node-2 into the shared store, read by a task on node-3."""
    from chaos.backends.swarm.plan import STORE_IN_NODE

    def task(node: int, code: str) -> str:
        container = swarm.client(node).containers.run(
            image,
            ["python3", "-c", code],
            user="1000",
            remove=True,
            volumes={STORE_IN_NODE: {"bind": "/backup", "mode": "rw"}},
        )
        return container.decode().strip()

    task(
        2,
        "import os; open('/backup/probe.tmp', 'w').write('written on node-2'); "
        "os.replace('/backup/probe.tmp', '/backup/probe')",
    )
    return task(3, "print('seen on node-3:', open('/backup/probe').read())")


def test_an_interrupted_bring_up_removes_what_it_made(docker_client, task_image, monkeypatch):
    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalSwarm, "_form_swarm", interrupted)
    swarm = LocalSwarm(docker_client, make_plan(f"t-int-{os.getpid()}", 2, owned=True))
    with pytest.raises(KeyboardInterrupt):
        swarm.up([task_image])
    assert swarm_objects(docker_client, swarm.plan.name) == []
    assert swarm_nodes.swarm_names(docker_client).count(swarm.plan.name) == 0
