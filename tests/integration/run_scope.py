"""Which Docker objects a test's runs left behind (used by conftest.py).

Scoped to the runs that appeared during the test, so a test session beside
another one, or beside a user's ``chaos run``, neither blames nor removes runs
that already existed when the test started. Every object a run creates carries
``LABEL_RUN`` with the run's id (chaos/cluster/docker_cluster.py).

Limit: a run someone else *starts while the test runs* is new too, and is
counted as the test's (runs carry no owner label).
"""

from __future__ import annotations

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.cluster import docker_api


def run_ids(client) -> set[str]:
    """The run id of every run-labelled container, network and volume.

    List calls only (``sparse`` containers are not inspected one by one): an
    object of another run may be removed between the list and an inspect.
    """
    filters = {"label": [f"{LABEL_PROJECT}={PROJECT}", LABEL_RUN]}
    found = [c.attrs.get("Labels") for c in client.containers.list(all=True, filters=filters, sparse=True)]
    found += [n.attrs.get("Labels") for n in client.networks.list(filters=filters)]
    found += [v.attrs.get("Labels") for v in client.volumes.list(filters=filters)]
    return {labels[LABEL_RUN] for labels in found if labels and labels.get(LABEL_RUN)}


def new_runs(before: set[str], after: set[str]) -> list[str]:
    """Runs present now that were not before the test, in a stable order."""
    return sorted(after - before)


def objects_of(client, runs: list[str]) -> list[str]:
    """``"container NAME"``, ``"network NAME"``, ``"volume NAME"`` of these runs."""
    return [obj for run in runs for obj in docker_api.list_labelled(client, {LABEL_RUN: run})]


def remove_runs(client, runs: list[str]) -> None:
    for run in runs:
        docker_api.remove_labelled(client, {LABEL_RUN: run})
