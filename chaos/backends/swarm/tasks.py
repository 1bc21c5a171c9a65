"""A one-task service's task as a value, waiting on it, and one-shot helper tasks."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chaos.errors import InfrastructureError

ENDED = frozenset({"complete", "failed", "rejected", "shutdown", "orphaned", "remove"})
POLL_S = 0.2


@dataclass(frozen=True)
class Task:
    state: str  # new, pending, assigned, accepted, preparing, starting, running, complete, failed, rejected, ...
    node_id: str = ""
    container_id: str = ""
    exit_code: int | None = None
    err: str = ""  # why it failed or was rejected, as the swarm says it
    message: str = ""
    ports: tuple[tuple[int, int], ...] = ()  # (target, published) in host mode
    addresses: dict[str, str] = field(default_factory=dict)  # network name -> address (no prefix length)
    created: str = ""
    id: str = ""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Task:
        status = data.get("Status") or {}
        container = status.get("ContainerStatus") or {}
        ports = tuple(
            (int(p.get("TargetPort", 0)), int(p.get("PublishedPort", 0)))
            for p in (status.get("PortStatus") or {}).get("Ports") or []
        )
        addresses = {}
        for attachment in data.get("NetworksAttachments") or []:
            name = ((attachment.get("Network") or {}).get("Spec") or {}).get("Name", "")
            found = attachment.get("Addresses") or []
            if name and found:
                addresses[name] = found[0].split("/")[0]
        return cls(
            state=status.get("State", ""),
            node_id=data.get("NodeID", ""),
            container_id=container.get("ContainerID", ""),
            exit_code=container.get("ExitCode"),
            err=status.get("Err", ""),
            message=status.get("Message", ""),
            ports=ports,
            addresses=addresses,
            created=data.get("CreatedAt", ""),
            id=data.get("ID", ""),
        )

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    def published(self, target: int) -> int | None:
        return next((pub for tgt, pub in self.ports if tgt == target and pub), None)

    def describe(self) -> str:
        text = f"task {self.state or 'not scheduled'}"
        if self.exit_code is not None and self.ended:
            text += f", exit {self.exit_code}"
        if self.err:
            text += f": {self.err}"
        return text


def current(service) -> Task | None:
    """The newest task of a one-task service (None: none scheduled yet, or the service is gone)."""
    try:
        tasks = service.tasks()
    except Exception:  # noqa: BLE001 - removed meanwhile
        return None
    if not tasks:
        return None
    return Task.of(max(tasks, key=lambda t: t.get("CreatedAt", "")))


def wait_task(
    service,
    until: Callable[[Task], bool],
    *,
    timeout: float,
    what: str,
    hint: str,
    stop: Callable[[], bool] = lambda: False,
) -> Task:
    """Poll the service's task until ``until(task)``; a task that ended otherwise, or the time
    running out, raises InfrastructureError with the task's state and the swarm's reason."""
    deadline = time.monotonic() + timeout
    task = None
    while time.monotonic() < deadline and not stop():
        task = current(service)
        if task is not None and until(task):
            return task
        if task is not None and task.ended:
            break
        time.sleep(POLL_S)
    state = task.describe() if task else "no task scheduled"
    raise InfrastructureError(f"{what}: {state}" + ("" if task and task.ended else f" after {timeout:g}s"), hint=hint)


def wait_next_task(service, after: str, *, timeout: float, stop: Callable[[], bool]) -> Task | None:
    """The service's task that follows task ``after`` (an orchestrator's restart) once it has a
    container; None if none came within ``timeout``, ``stop()`` said so, or it ended without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop():
        task = current(service)
        if task is not None and task.id != after:
            if has_container(task):
                return task
            if task.ended:
                return None
        time.sleep(POLL_S)
    return None


def has_container(task: Task) -> bool:
    return bool(task.container_id) and task.state in ("starting", "running", "complete", "failed", "shutdown")


def run_once(manager, spec: dict[str, Any], *, timeout: float, what: str, hint: str) -> str:
    """Create a one-shot service, wait until its task completes, return its output; the
    service is removed whatever happens. A task that fails raises, with its last lines."""
    service = manager.services.create(**spec)
    try:
        task = wait_task(service, lambda t: t.ended, timeout=timeout, what=what, hint=hint)
        out = _logs(service)
        if task.state != "complete":
            raise InfrastructureError(f"{what}: {task.describe()}: {out.strip()[-300:]}", hint=hint)
        return out
    finally:
        try:
            service.remove()
        except Exception:  # noqa: BLE001 - gone already; teardown lists by label anyway
            pass


def _logs(service) -> str:
    try:
        return b"".join(service.logs(stdout=True, stderr=True)).decode(errors="replace")
    except Exception as exc:  # noqa: BLE001 - the output is evidence only
        return f"(no output: {exc})"
