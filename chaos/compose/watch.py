"""`chaos compose --watch`: the progress of the docker-compose cluster, live.

While an engineer adds a toxic, pauses or kills a worker by hand, one line
every interval says where each worker is (global step, epoch, loss, steps a
second) and a line of its own says what happened (an error, an exit, a restart
and the checkpoint it restored). ``Board`` is pure (events in, text out); the
rest follows the compose project's worker containers, across the restarts
their ``restart: on-failure`` policy makes.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

from chaos import LABEL_PROJECT, PROJECT
from chaos.errors import InfrastructureError
from chaos.events import DoneEvent, ErrorEvent, Event, LogLine, RestoredEvent, StartEvent, StepEvent, parse_line
from chaos.events_text import error_text

COMPOSE_PROJECT = "com.docker.compose.project"
COMPOSE_SERVICE = "com.docker.compose.service"


@dataclass
class WorkerProgress:
    step: int = 0
    epoch: int = 0
    loss: float | None = None
    rate_from: tuple[float, int] | None = None  # (time, step) at the last status line
    state: str = "starting"
    exits: list[int] = field(default_factory=list)


class Board:
    """Per-worker progress from events; thread-safe (one follower thread per worker)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.workers: dict[str, WorkerProgress] = {}

    def _get(self, worker: str) -> WorkerProgress:
        return self.workers.setdefault(worker, WorkerProgress())

    def feed(self, worker: str, event: Event) -> str | None:
        """Take one event; return a line to print at once for the notable ones."""
        with self._lock:
            w = self._get(worker)
            if isinstance(event, StepEvent):
                w.step, w.epoch, w.loss = event.step, event.epoch, event.loss
                w.state = "training"
                return None
            if isinstance(event, StartEvent):
                w.state = "starting"
                w.rate_from = None
                return f"{worker}: started (TF {event.tf_version})"
            if isinstance(event, RestoredEvent):
                w.step, w.rate_from = event.step, None
                return f"{worker}: restored {event.checkpoint or 'the backup'}: resumes at epoch {event.epoch}, step {event.step}"
            if isinstance(event, ErrorEvent):
                w.state = "failed"
                return f"{worker}: {error_text(event)[:240]}"
            if isinstance(event, DoneEvent):
                w.state = "done"
                return f"{worker}: done at step {event.step}"
            return None

    def exited(self, worker: str, code: int) -> str:
        with self._lock:
            w = self._get(worker)
            w.exits.append(code)
            w.state = "done" if code == 0 else f"exited {code}"
            return f"{worker}: exited {code}"

    def paused(self, worker: str, is_paused: bool) -> None:
        with self._lock:
            w = self._get(worker)
            if is_paused:
                w.state = "paused"
            elif w.state == "paused":
                w.state = "training"

    def status_line(self, now: float) -> str:
        """``HH:MM:SS  worker-0 step 3453 ep 6 loss 0.0134 412/s | worker-1 ...``; the rate
        is the steps since the previous status line."""
        with self._lock:
            parts = []
            for name in sorted(self.workers):
                w = self.workers[name]
                rate = ""
                if w.rate_from is not None and now > w.rate_from[0]:
                    rate = f" {max(0, w.step - w.rate_from[1]) / (now - w.rate_from[0]):.0f}/s"
                w.rate_from = (now, w.step)
                loss = f" loss {w.loss:.4g}" if w.loss is not None else ""
                state = "" if w.state == "training" else f" [{w.state}]"
                parts.append(f"{name} step {w.step} ep {w.epoch}{loss}{rate}{state}")
            return time.strftime("%H:%M:%S", time.localtime(now)) + "  " + (" | ".join(parts) or "no worker yet")


def compose_containers(client, project: str | None) -> dict[str, object]:
    """The compose project's containers of tfchaos by service name (``proxy``, ``worker-i``)."""
    filters = {"label": [f"{LABEL_PROJECT}={PROJECT}", COMPOSE_SERVICE]}
    if project:
        filters["label"].append(f"{COMPOSE_PROJECT}={project}")
    return {c.labels.get(COMPOSE_SERVICE, ""): c for c in client.containers.list(all=True, filters=filters)}


def compose_workers(client, project: str | None) -> dict[str, object]:
    return {name: c for name, c in compose_containers(client, project).items() if name.startswith("worker-")}


def _started_at(container) -> datetime | None:
    text = container.attrs.get("State", {}).get("StartedAt", "")
    try:  # "2026-11-25T09:58:06.123456789Z": Python takes microseconds
        return datetime.fromisoformat(text[:26].rstrip("Z") + "+00:00")
    except ValueError:
        return None


def _follow(container, worker: str, board: Board, say, stop: threading.Event) -> None:
    """Follow one worker's output across restarts of its container: from now
    on the first time (no replay of hours of steps), from its new start after."""
    since: datetime | int = int(time.time())
    while not stop.is_set():
        try:
            container.reload()
        except Exception:  # removed (docker-compose down): nothing more to follow
            say(f"{worker}: container removed")
            return
        board.paused(worker, container.status == "paused")
        if container.status not in ("running", "paused"):
            stop.wait(0.5)
            continue
        try:
            buffer = b""
            for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True, since=since):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    event = parse_line(raw.decode("utf-8", "replace"), worker)
                    if not isinstance(event, LogLine):
                        line = board.feed(worker, event)
                        if line:
                            say(line)
                if stop.is_set():
                    return
        except Exception:
            pass
        try:
            container.reload()
            code = container.attrs.get("State", {}).get("ExitCode")
            if container.status == "exited" or container.attrs.get("State", {}).get("Restarting"):
                say(board.exited(worker, int(code or 0)))
        except Exception:
            return
        while not stop.is_set():  # until it runs again: restarted by its policy or by hand
            try:
                container.reload()
            except Exception:
                say(f"{worker}: container removed")
                return
            if container.status == "running":
                since = _started_at(container) or int(time.time())
                break
            stop.wait(0.5)


def watch(client, project: str | None = None, interval: float = 2.0, out=None, until: float | None = None) -> int:
    """Print progress until Ctrl-C (or ``until`` seconds since the epoch, for tests)."""
    out = out or sys.stdout
    lock = threading.Lock()

    def say(text: str) -> None:
        with lock:
            print(text, file=out, flush=True)

    workers = compose_workers(client, project)
    if not workers:
        raise InfrastructureError(
            "no docker-compose worker of tfchaos is running" + (f" in project {project!r}" if project else ""),
            hint="start the cluster first: `docker-compose up -d` in the checkout (after `chaos images build`)",
        )
    board = Board()
    stop = threading.Event()
    threads = [
        threading.Thread(target=_follow, args=(c, name, board, say, stop), daemon=True, name=f"watch-{name}")
        for name, c in sorted(workers.items())
    ]
    for name in sorted(workers):
        board.feed(name, LogLine(t=time.time(), source=name))
    for t in threads:
        t.start()
    say(f"watching {', '.join(sorted(workers))} (Ctrl-C stops watching, not the cluster)")
    try:
        while until is None or time.time() < until:
            time.sleep(interval)
            say(board.status_line(time.time()))
    finally:
        stop.set()
    return 0
