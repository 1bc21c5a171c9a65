"""What TF's ``Started server with target: grpc://HOST:PORT`` line says of a
task's address.

TF up to 2.3 printed its own server as ``grpc://localhost:PORT`` whatever
TF_CONFIG said (the training cases tf-models-282, tf-17852, tf-20585, tf-35878
print it next to clusters of IP addresses); later TFs print the address the
cluster gives the task (this framework's runs: ``grpc://proxy:23600``). So a
localhost target is evidence of a localhost TF_CONFIG only when the same logs
show a server target naming another host: that TF prints configured addresses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chaos.diagnose.observations import Evidence, WorkerObservations

_TARGET = re.compile(r"Started server with target: grpc://(?P<host>\[[^\]]*\]|[^:/\s]+):\d+")
_LOCAL = {"localhost", "127.0.0.1", "[::1]", "0.0.0.0"}


def target_host(text: str) -> str | None:
    match = _TARGET.search(text)
    return match["host"] if match else None


def is_local_target(text: str) -> bool:
    return target_host(text) in _LOCAL


def prints_configured_hosts(workers: Iterable[WorkerObservations]) -> bool:
    """Some server target in these logs names a host that is not this machine."""
    for w in workers:
        for gen in w.generations:
            for _, evidence in gen.hang_lines:
                host = target_host(evidence.text)
                if host is not None and host not in _LOCAL:
                    return True
    return False


def only_uninformative_targets(hits: list[Evidence], workers: list[WorkerObservations]) -> bool:
    """Every hit is a localhost server target, and these logs give no sign that
    their TF prints configured addresses: the hits say nothing of TF_CONFIG."""
    return bool(hits) and all(is_local_target(h.text) for h in hits) and not prints_configured_hosts(workers)
