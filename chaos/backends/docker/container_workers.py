"""What a cluster does the same wherever its workers are Docker containers: on this
host's engine (chaos.backends.docker.cluster) or on a swarm node's
(chaos.backends.swarm.cluster).

Signals, stops, pauses, limits and commands go to a worker's current container
through the engine that holds it; the two clusters differ in how they make,
place, wire and restart the containers, which stays theirs.
"""

from __future__ import annotations

import threading
from typing import Any

from chaos.backends.docker import api as docker_api
from chaos.backends.docker import limits as docker_limits
from chaos.backends.overrides import WorkerOverride
from chaos.events import Event
from chaos.worker.control import WorkerCommand


class ContainerVerbs:
    """The verbs that act on a running worker's container, whoever made it: a
    subclass gives ``container(i)``, ``worker_name(i)``, ``proxies`` and ``_limits(i)``
    (the limits worker ``i`` was created with). chaos.compose.control uses these too."""

    def signal(self, index: int, signal: str) -> None:
        docker_api.ignore_gone(self.container(index).kill, signal=signal)

    def pause(self, index: int) -> None:
        docker_api.pause(self.container(index))

    def unpause(self, index: int) -> None:
        docker_api.unpause_if_paused(self.container(index))

    def proxy(self, index: int):
        return self.proxies.proxy(self.worker_name(index))

    def limit_cpu(self, index: int, cpus: float) -> None:
        self.container(index).update(**docker_limits.cpu(cpus))

    def limit_memory(self, index: int, limit_bytes: int) -> None:
        self.container(index).update(**docker_limits.memory(limit_bytes))

    def restore_cpu(self, index: int) -> None:
        self.container(index).update(**docker_limits.cpu_as_created(self._limits(index)))

    def restore_memory(self, index: int) -> None:
        self.container(index).update(**docker_limits.memory_as_created(self._limits(index)))

    def _limits(self, index: int) -> dict[str, Any]:
        raise NotImplementedError


class ContainerWorkers(ContainerVerbs):
    """A base for the clusters. A subclass sets ``spec``, ``topology``, ``events``,
    ``overrides``, ``proxies``, ``workers`` (each with ``container`` and ``follower``),
    ``labels``, ``prefix``, ``_command_seq``, ``_netns_ready`` and ``_netns_started``, and
    gives ``container(i)``, ``_engine(i)`` (the engine that holds worker i's container),
    ``_require_image(image)`` (on the engine its workers are created from),
    ``start_infrastructure()``, ``teardown()`` and ``_limits(i)``."""

    # --- lifecycle: a context manager that tears down also when bring-up fails ---

    def __enter__(self):
        try:
            self.start_infrastructure()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.teardown()

    # --- ClusterControl and the abilities both clusters serve, on the worker's container ---

    def worker_name(self, index: int) -> str:
        return self.topology.worker_name(index)

    def tf_config(self, index: int) -> str:
        return self.topology.tf_config(index)

    def preempt(self, index: int, grace_s: float) -> None:
        # Docker's stop is exactly a preemption (SIGTERM, grace, SIGKILL); it
        # blocks for the grace, so it runs beside the supervisor's loop.
        container = self.container(index)
        threading.Thread(
            target=docker_api.stop,
            args=(container,),
            kwargs={"grace_s": grace_s},
            name=f"preempt-{self.worker_name(index)}",
            daemon=True,
        ).start()

    def netns(self, index: int):
        """A helper container in worker ``index``'s network namespace, on the engine that
        holds the worker, labelled with this run (chaos.backends.docker.netns); the packet
        faults close it at heal. One started ahead (``netns_ahead``) serves if it joined
        this very container; one of a container since replaced is removed."""
        current = self.container(index)
        while self._netns_ready.get(index):
            helper = self._netns_ready[index].pop(0)
            if helper.target.id == current.id and helper.is_running():
                return helper
            helper.close()
        return self._join_netns(index, current)

    def netns_ahead(self, index: int) -> None:
        """Start a helper in worker ``index``'s namespace now, for a packet fault to
        come (starting one takes seconds under load), and probe the kernel with it.
        Left unused, it goes with the run's teardown."""
        helper = self._join_netns(index, self.container(index))
        self._netns_ready.setdefault(index, []).append(helper)
        helper.capabilities()

    def _join_netns(self, index: int, container):
        from chaos.backends.docker.netns import DockerNetns

        helper = DockerNetns.join(
            self._engine(index), container, labels=self.labels, prefix=f"{self.prefix}-{self.worker_name(index)}"
        )
        self._netns_started.append(helper)
        return helper

    def memory_usage(self, index: int) -> int:
        """Bytes the worker's container uses now (its cgroup's usage)."""
        return docker_api.memory_usage(self.container(index), self.worker_name(index))

    def command(self, index: int, command: WorkerCommand) -> None:
        """Send a command to the worker's training process (``chaos.worker.control``)."""
        self._command_seq += 1
        docker_api.send_command(self.container(index), self.worker_name(index), self._command_seq, command)

    def override(
        self,
        index: int,
        owner: str,
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,
        cluster_config: str | None = None,
    ) -> None:
        """Change how worker ``index`` is created from its next (re)start on (an image by the
        name the scenario gives it: chaos.backends.spec.Deployment.image_map)."""
        if image is not None:
            image = self.spec.image_map.get(image, image)
            self._require_image(image)
        self.overrides.set(index, owner, WorkerOverride(image, dict(env or {}), dict(settings or {}), cluster_config))

    def clear_override(self, index: int, owner: str) -> None:
        self.overrides.clear(index, owner)

    def _require_image(self, image: str) -> None:
        raise NotImplementedError

    def log_tail(self, index: int) -> list[str]:
        worker = self.workers.get(index)
        return list(worker.follower.tail) if worker is not None and worker.follower is not None else []

    def checkpoint_files(self) -> int | None:
        # Read through worker-0's container, which may have exited: Docker
        # copies out of a stopped container's mounts too.
        worker = self.workers.get(0)
        if worker is None or worker.container is None:
            return None
        return docker_api.count_files(worker.container, self.spec.launch.checkpoint_dir)

    def record(self, event: Event) -> None:
        self.events.append(event)
