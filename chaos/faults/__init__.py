"""Faults, registered by name in ``FAULTS``.

Each fault is a frozen pydantic model (its fields are its parameters) with
``inject(cluster)`` and an idempotent ``heal(cluster)``; see ``base``. Adding a
fault: a class in a module here decorated with ``@register_fault``, imported
below.
"""

from chaos.faults.base import FAULTS, Fault, WorkerFault, WorkersFault, register_fault

# Import order is registration order, which `chaos list` shows.
from chaos.faults.process import KillWorker, PauseWorker, PreemptWorker  # isort: skip
from chaos.faults.network import Bandwidth, BlockedPort, Latency, Partition  # isort: skip
from chaos.faults.degraded import ConnectionReset, OneWayBlackhole, SlowClose, Sliced, StreamCut  # isort: skip
from chaos.faults.packet import (  # isort: skip
    MtuBlackhole,
    PacketCorrupt,
    PacketDelay,
    PacketDuplicate,
    PacketLoss,
    PacketReorder,
    SilentDrop,
    SynDrop,
)
from chaos.faults.environment import ReusedSeed, VersionSkew  # isort: skip
from chaos.faults.cluster_config import TfConfig  # isort: skip
from chaos.faults.checkpoint import (  # isort: skip
    CheckpointDiskFull,
    CorruptCheckpoint,
    KillDuringSave,
    SlowCheckpointStorage,
    StaleCheckpoint,
)
from chaos.faults.training_skew import BatchSizeSkew, SeedSkew  # isort: skip
from chaos.faults.poison import PoisonInput  # isort: skip
from chaos.faults.resources import CpuThrottle, DeviceOOM, HostOOM  # isort: skip
from chaos.faults.node import NodeDrained, NodeLost  # isort: skip

__all__ = [
    "FAULTS",
    "Bandwidth",
    "BatchSizeSkew",
    "BlockedPort",
    "CheckpointDiskFull",
    "ConnectionReset",
    "CorruptCheckpoint",
    "CpuThrottle",
    "DeviceOOM",
    "Fault",
    "HostOOM",
    "KillDuringSave",
    "KillWorker",
    "Latency",
    "MtuBlackhole",
    "NodeDrained",
    "NodeLost",
    "OneWayBlackhole",
    "PacketCorrupt",
    "PacketDelay",
    "PacketDuplicate",
    "PacketLoss",
    "PacketReorder",
    "Partition",
    "PauseWorker",
    "PoisonInput",
    "PreemptWorker",
    "ReusedSeed",
    "SeedSkew",
    "SilentDrop",
    "SlowClose",
    "Sliced",
    "SlowCheckpointStorage",
    "StaleCheckpoint",
    "StreamCut",
    "SynDrop",
    "TfConfig",
    "VersionSkew",
    "WorkerFault",
    "WorkersFault",
    "register_fault",
]
