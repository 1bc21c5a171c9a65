"""A worker started ahead of use: TensorFlow imported, waiting for its go.

Importing TensorFlow is most of a worker start's CPU (docs/speed.md), and on a
real cluster the orchestrator's replacement pod pays it while the job stands
still. The runner may instead create the next container of a worker ahead of
time, at a low CPU weight, with ``STANDBY_ENV`` set: it imports TensorFlow
while the machine has idle CPU, then waits for the runner's go file. The go
file carries the environment keys that only the harness reads after the import
(``LATE_ENV``: its cluster and its settings); everything else (image, other
environment, limits, command) was fixed at creation and must equal what a fresh
container would get, or the runner creates a fresh one instead
(``chaos.backends.docker.standby``). After the go the process is an ordinary worker:
its own container, its own process, killed and observed like any other.

No TensorFlow import at module level (the runner imports ``LATE_ENV``).
"""

from __future__ import annotations

import json
import os
import signal

from chaos.worker.cluster_env import TASK_INDEX_ENV, TF_CONFIG_ENV, WORKERS_ENV
from chaos.worker.emit import WORKER_INDEX_ENV
from chaos.worker.settings import ENV_VAR as SETTINGS_ENV

STANDBY_ENV = "CHAOS_STANDBY"  # the go file's path; set only on a standby container
# The runner signals after writing the go file, so a standby sleeps instead of
# polling a file (each look goes through the image's filesystem driver). Held
# from __main__'s first lines; SIGWINCH because its default is to be ignored: one
# that comes before the hold (a starved standby may take seconds to get there)
# is lost, never fatal, and the next look finds the file.
GO_SIGNAL = signal.SIGWINCH
# What a worker may learn at its go rather than at its start: read by the
# harness after the import, never by TensorFlow's import itself.
LATE_ENV = frozenset({TF_CONFIG_ENV, WORKERS_ENV, TASK_INDEX_ENV, WORKER_INDEX_ENV, SETTINGS_ENV})
LOOK_S = 0.5  # a look at the go file even with no signal (one sent before it was held)


def hold_go_signal() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {GO_SIGNAL})


def wait_for_go(go_path: str, *, preload=None, wait=None) -> dict[str, str]:
    """Import TensorFlow (``preload``), then wait for the go file; apply and return its environment."""
    if preload is None:
        from chaos.worker import tfcompat

        preload = tfcompat.load
    wait = wait or (lambda: signal.sigtimedwait({GO_SIGNAL}, LOOK_S))
    preload()
    while True:
        env = read_go(go_path)
        if env is not None:
            os.environ.update(env)
            return env
        wait()


def read_go(go_path: str) -> dict[str, str] | None:
    """The go file's environment, or None while there is none (or it is still being written)."""
    try:
        with open(go_path, encoding="utf-8") as f:
            env = json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    unknown = set(env) - LATE_ENV
    if unknown:  # a runner bug: everything else was fixed when the container was created
        raise SystemExit(f"standby: the go file sets {sorted(unknown)}, which a started process cannot change")
    return {str(k): str(v) for k, v in env.items()}
