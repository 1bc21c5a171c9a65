"""docker-compose.yml is generated from the topology the runner uses: the
committed files must equal what the code renders (one source of truth)."""

from pathlib import Path

import yaml

from chaos.compose import files as compose
from chaos.topology import Topology

ROOT = Path(__file__).resolve().parents[3]


def test_committed_compose_file_matches_the_topology():
    assert (ROOT / compose.COMPOSE_FILE).read_text() == compose.render_compose(), (
        "docker-compose.yml is stale: run `chaos compose --write`"
    )
    assert (ROOT / compose.ROUTES_FILE).read_text() == compose.routes_json(Topology(2))


def test_compose_workers_reach_each_other_only_through_the_proxy():
    doc = yaml.safe_load(compose.render_compose())
    for i in range(2):
        env = doc["services"][f"worker-{i}"]["environment"]
        assert '"proxy:23600", "proxy:23601"' in env["TF_CONFIG"]
    routes = {r["name"]: r for r in yaml.safe_load((ROOT / compose.ROUTES_FILE).read_text())}
    assert routes["worker-1"] == {
        "name": "worker-1",
        "listen": "0.0.0.0:23601",
        "upstream": "worker-1:23601",
        "enabled": True,
    }
