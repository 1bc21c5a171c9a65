"""Faults, registered by name in ``FAULTS``.

Each fault is a frozen pydantic model (its fields are its parameters) with
``inject(cluster)`` and an idempotent ``heal(cluster)``; see ``base``. Adding a
fault: a class in a module here decorated with ``@register_fault``, imported
below. Names reserved for later: ``FAULTS.planned``.
"""

from chaos.faults.base import FAULTS, Fault, WorkerFault, register_fault

# Import order is registration order, which `chaos list` shows.
from chaos.faults.process import KillWorker, PauseWorker  # isort: skip
from chaos.faults.network import Bandwidth, BlockedPort, Latency, Partition  # isort: skip

__all__ = [
    "FAULTS",
    "Bandwidth",
    "BlockedPort",
    "Fault",
    "KillWorker",
    "Latency",
    "Partition",
    "PauseWorker",
    "WorkerFault",
    "register_fault",
]
