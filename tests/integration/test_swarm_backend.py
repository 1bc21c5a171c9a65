"""A scenario on a 3-node Docker Swarm on this machine (chaos.backends.swarm.nodes):
``killed-worker-recovers-from-checkpoint`` through ``--backend swarm`` (the manager
named by DOCKER_HOST), each worker on a node of its own, every verdict passing,
recovery bit-exact against the uninterrupted run computed on one Docker host, and
nothing of the run left on the swarm.

Gated: it loads the 1.7 GB worker image into three nodes and takes minutes
(docs/backends.md: the figure), so the default run (`bin/test`, CI) skips it;
``TFCHAOS_SWARM_SCENARIOS=1`` runs it:

    TFCHAOS_SWARM_SCENARIOS=1 python3 -m pytest -p no:cacheprovider -s tests/integration/test_swarm_backend.py
"""

from __future__ import annotations

import os
import time

import pytest

from chaos.backends.docker.backend import DockerBackend
from chaos.backends.swarm.backend import SwarmBackend
from chaos.backends.swarm.nodes import local_swarm
from chaos.backends.swarm.plan import STORE_IN_NODE
from chaos.checks.verdict import Status
from chaos.events import AddressEvent, ExitEvent, RestartEvent
from chaos.runner.reference import uninterrupted_reference
from chaos.runner.run import RunOptions, deployment_of, prepare_images, run
from chaos.scenario.loader import load_many

GATE = "TFCHAOS_SWARM_SCENARIOS"
KILLED = "scenarios/killed-worker-recovers-from-checkpoint.yaml"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.swarm,
    pytest.mark.skipif(os.environ.get(GATE) != "1",
                       reason=f"minutes long (a 1.7 GB image into 3 nodes): set {GATE}=1 to run it (docs/backends.md)"),
]


def say(msg: str) -> None:
    print(f"[swarm-backend] {msg}", flush=True)


def test_killed_worker_recovers_bit_exact_with_each_worker_on_its_own_node(docker_client, images, monkeypatch, tmp_path):
    [scenario], errors = load_many([KILLED])
    assert not errors
    # The uninterrupted run on one Docker host (cached when computed before): the swarm's
    # recovered run must end with the same weights digest.
    on_one_host = uninterrupted_reference(deployment_of(scenario, prepare_images(scenario, RunOptions(), None)),
                                          DockerBackend(docker_client))
    assert on_one_host.digest
    t0 = time.monotonic()
    with local_swarm(nodes=3, images=[images["worker"], images["proxy"]], client=docker_client, progress=say) as swarm:
        up_s = time.monotonic() - t0
        monkeypatch.setenv("DOCKER_HOST", swarm.plan.docker_host(1))
        t1 = time.monotonic()
        report = run(scenario, KILLED, RunOptions(backend=SwarmBackend(), report_dir=tmp_path), progress=say)
        run_s = time.monotonic() - t1
        say(f"swarm up {up_s:.1f}s ({' '.join(swarm.timings.lines()).strip()}), run {run_s:.1f}s, "
            f"total {time.monotonic() - t0:.1f}s")
        leftovers = what_the_run_left(swarm, images["worker"])
    failed = [f"{v.check}: {v.status.value}: {v.reason}" for v in report.verdicts if v.status is not Status.PASS]
    assert report.status is Status.PASS, f"{report.error or ''} {failed}"
    assert report.reproduce == f"chaos run {KILLED} --backend swarm"
    places = [(e.task, e.node) for e in report.timeline.of(AddressEvent)]
    say(f"placement: {places}")
    first = dict(places[:2])
    assert set(first) == {"worker-0", "worker-1"} and len(set(first.values())) == 2, places
    assert "node-1" not in first.values()  # workers on the worker nodes, the proxy on the manager
    assert len(places) == 4 and dict(places[2:]) == first  # restarted on the same nodes
    exits = {(e.source, e.exit_code) for e in report.timeline.of(ExitEvent)}
    assert ("worker-1", 137) in exits
    assert {e.source for e in report.timeline.of(RestartEvent)} == {"worker-0", "worker-1"}
    assert leftovers == {}, leftovers


def what_the_run_left(swarm, image: str, settle_s: float = 15.0) -> dict:
    """The run's services, networks and containers still on the swarm, and its store folder."""
    deadline = time.monotonic() + settle_s
    while True:
        left = {}
        services = [s.name for s in swarm.client(1).services.list()]
        networks = [n.name for n in swarm.client(1).networks.list(filters={"label": "io.tfchaos.backend=swarm"})]
        containers = {i: [c.name for c in swarm.client(i).containers.list(
            all=True, filters={"label": "io.tfchaos.backend=swarm"})] for i in swarm.plan.indices()}
        if services:
            left["services"] = services
        if networks:
            left["networks"] = networks
        if any(containers.values()):
            left["containers"] = containers
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    listing = swarm.client(2).containers.run(image, entrypoint=["ls", "-A", "/store"], remove=True,
                                             volumes={STORE_IN_NODE: {"bind": "/store", "mode": "ro"}})
    if listing.decode().split():
        left["store"] = listing.decode().split()
    return left
