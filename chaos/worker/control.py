"""Commands the runner sends a running worker, applied between training steps.

Some faults must act *inside* the training process at a chosen step: a device
runs out of memory because the step suddenly needs more than the device has.
The runner writes ``CONTROL_PATH`` in the worker's container (``docker exec``,
see ``DockerCluster.command``); a callback stats the file before every batch
(microseconds) and applies a new command once. A restarted worker is a new
container without the file, so a restart always comes back healthy.

Commands (``{"seq": n, "command": name, "params": {...}}``):

* ``memory_demand`` ``{"demand_mb": D, "cap_mb": L | null}``: from the next
  step on, the train step allocates a D MB tensor (``model.py``). ``cap_mb``
  caps the device memory first: on CPU the process's address space is limited
  to what it maps now plus L MB (``RLIMIT_AS``), so TF's allocator fails with
  the real ``ResourceExhaustedError``; on a GPU the cap is TF's logical device
  memory limit, which can only be set at start (``device_memory_mb``).
  ``demand_mb: 0, cap_mb: null`` lifts both.
* ``kill_during_save`` ``{"epoch": E}``: the first backup this process writes in
  epoch E (null: the next one) kills it (SIGKILL) between its files and its state
  file (``backups.py``).
"""

from __future__ import annotations

import dataclasses
import json
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from chaos.events import CommandEvent
from chaos.worker.emit import Emitter


@dataclass(frozen=True)
class MemoryDemand:
    """``memory_demand``: from the next step on, allocate ``demand_mb`` in the train step,
    the device capped at ``cap_mb`` first (None: no cap); ``MemoryDemand(0)`` lifts both."""

    demand_mb: int
    cap_mb: int | None = None
    name: ClassVar[str] = "memory_demand"


@dataclass(frozen=True)
class KillDuringSaveCommand:
    """``kill_during_save``: the first backup this process writes in ``epoch`` (None:
    the next one) kills it. An epoch makes the kill's moment independent of when the
    command arrives, which takes seconds on a loaded machine (more than an epoch of a
    small job)."""

    epoch: int | None = None
    name: ClassVar[str] = "kill_during_save"


# What a fault may send a worker's training process (ClusterControl.command).
WorkerCommand = MemoryDemand | KillDuringSaveCommand


def params_of(command: WorkerCommand) -> dict[str, Any]:
    """A command's parameters as they travel in the control file."""
    return dataclasses.asdict(command)


CONTROL_DIR = "/run/chaos"
CONTROL_PATH = f"{CONTROL_DIR}/control.json"
MB = 1 << 20


class ControlChannel:
    """Reads the runner's newest command, once."""

    def __init__(self, path: str = CONTROL_PATH) -> None:
        self.path = path
        self._seq: int | None = None

    def poll(self) -> dict[str, Any] | None:
        try:
            with open(self.path) as f:
                command = json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            return None  # none yet, or a write in progress (the runner renames, but be safe)
        if not isinstance(command, dict) or command.get("seq") == self._seq:
            return None
        self._seq = command.get("seq")
        return command


def mapped_bytes() -> int:
    """The process's virtual memory size now (``VmSize``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


# The soft limit before the first cap: what lifting the cap gives back.
_uncapped_soft: int | None = None


def cap_address_space(headroom_mb: int | None) -> int | None:
    """Limit this process to what it maps now plus ``headroom_mb``; None lifts it
    (back to the soft limit the process had before; a no-op when never capped).

    Returns the limit in bytes (None when lifted).
    """
    global _uncapped_soft
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if headroom_mb is None:
        if _uncapped_soft is not None:
            resource.setrlimit(resource.RLIMIT_AS, (_uncapped_soft, hard))
            _uncapped_soft = None
        return None
    if _uncapped_soft is None:
        _uncapped_soft = soft
    limit = mapped_bytes() + headroom_mb * MB
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return limit


def cap_gpu_memory(tf, memory_mb: int) -> bool:
    """Give the first GPU a logical device of ``memory_mb`` (before TF initializes it).

    The documented way to make a GPU smaller: ``tf.config.set_logical_device_configuration``.
    Returns False when there is no GPU.
    """
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return False
    tf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=memory_mb)])
    return True


def memory_demand_applier(tf, demand_var, has_gpu: bool) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Apply ``memory_demand``: set the cap (CPU), then the step's extra allocation."""

    def apply(params: dict[str, Any]) -> dict[str, Any]:
        demand_mb = int(params.get("demand_mb", 0))
        cap_mb = params.get("cap_mb")
        applied: dict[str, Any] = {"demand_mb": demand_mb}
        if has_gpu:
            applied["cap"] = "logical GPU memory limit set at start (device_memory_mb)"
        else:
            limit = cap_address_space(None if cap_mb is None else int(cap_mb))
            applied["address_space_limit_mb"] = None if limit is None else limit // MB
        demand_var.assign(demand_mb * MB // 4)  # float32 elements
        return applied

    return apply


def make_control_callback(keras, channel: ControlChannel, handlers: dict[str, Callable], emitter: Emitter):
    """A callback that applies new commands before each batch."""

    class ApplyRunnerCommands(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            command = channel.poll()
            if command is None:
                return
            name = command.get("command", "")
            handler = handlers.get(name)
            if handler is None:
                emitter.emit(
                    CommandEvent, command=name, params={"error": f"unknown command; valid: {sorted(handlers)}"}
                )
                return
            emitter.emit(CommandEvent, command=name, params=handler(command.get("params", {})))

    return ApplyRunnerCommands


def control_file_script(seq: int, command: str, params: dict[str, Any]) -> list[str]:
    """The ``docker exec`` argv that writes a command atomically (write, then rename)."""
    payload = json.dumps({"seq": seq, "command": command, "params": params})
    tmp = f"{CONTROL_PATH}.tmp"
    return [
        "sh",
        "-c",
        f'mkdir -p {CONTROL_DIR} && printf "%s" "$1" > {tmp} && mv {tmp} {CONTROL_PATH}',
        "sh",
        payload,
    ]


__all__ = [
    "CONTROL_PATH",
    "ControlChannel",
    "KillDuringSaveCommand",
    "MemoryDemand",
    "WorkerCommand",
    "cap_address_space",
    "cap_gpu_memory",
    "control_file_script",
    "make_control_callback",
    "memory_demand_applier",
    "params_of",
]
