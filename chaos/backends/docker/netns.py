"""A helper container in a worker's network namespace.

``network_mode: container:<worker>`` puts the helper in the worker's network
namespace (its interfaces, routes, iptables, qdiscs) and nothing else of it;
NET_ADMIN is granted to the helper only, the worker stays unprivileged. The
helper carries the run's labels (``io.tfchaos.role=netns-helper``), so the
cluster's teardown and ``chaos clean`` remove it like every other object of the
run; its rules live in the worker's namespace and go with the worker's
container at the latest.

Scripts run in it as ``python3 -c <source>`` (chaos.netns.nfqueue), as the
backup helper runs chaos.backends.backup_files: the image carries tools, not
the project's code.
"""

from __future__ import annotations

import inspect
import json
import shlex
import time
import uuid
from collections.abc import Sequence
from typing import Any

from chaos.errors import InfrastructureError
from chaos.netns import nfqueue
from chaos.netns.rules import Capabilities
from chaos.topology import PROXY_ALIAS

ROLE = "netns-helper"
LABEL_ROLE = "io.tfchaos.role"
LABEL_TARGET = "io.tfchaos.netns_of"
SHAPER_LOG = "/tmp/tfchaos-nfq.log"


_PROBED: dict[str, Capabilities] = {}  # engine -> what its kernel can do (DockerNetns.capabilities)


class DockerNetns:
    """One helper in one container's network namespace; ``close`` removes it."""

    def __init__(self, client, target, *, labels: dict[str, str], name: str, image: str) -> None:
        self.client = client
        self.target = target
        self.labels = labels
        self.name = name
        self.image = image
        self.container = None
        self._caps: Capabilities | None = None

    @classmethod
    def join(cls, client, target, *, labels: dict[str, str], prefix: str, image: str | None = None) -> DockerNetns:
        from chaos.images.netns_helper import HELPER_IMAGE

        helper = cls(
            client, target, labels=labels, name=f"{prefix}-netns-{uuid.uuid4().hex[:6]}", image=image or HELPER_IMAGE
        )
        return helper.start()

    def start(self) -> DockerNetns:
        from docker.errors import APIError, ImageNotFound

        try:
            self.container = self.client.containers.run(
                self.image,
                entrypoint=["sleep", "infinity"],
                command=[],
                name=self.name,
                labels={**self.labels, LABEL_ROLE: ROLE, LABEL_TARGET: self.target.name},
                network_mode=f"container:{self.target.id}",
                cap_add=["NET_ADMIN"],
                detach=True,
                init=True,
            )
        except ImageNotFound:
            engine = str(getattr(getattr(self.client, "api", None), "base_url", "")) or "this engine"
            raise InfrastructureError(
                f"the network helper image {self.image!r} is not on the engine that holds "
                f"{self.target.name} ({engine})",
                hint="build it with `chaos images build --only helper` (see `chaos images status`); on a swarm, "
                "every node needs it too (`chaos swarm up` loads it; docs/backends.md)",
            ) from None
        except APIError as exc:
            raise InfrastructureError(
                f"could not start a network helper in {self.target.name}'s namespace: {exc.explanation or exc}",
                hint="the worker must be running (a helper joins a running container's network namespace)",
            ) from None
        return self

    # --- commands ----------------------------------------------------------

    def try_run(self, argv: Sequence[str]) -> tuple[int, str]:
        result = self.container.exec_run(list(argv), demux=False)
        return int(result.exit_code), (result.output or b"").decode(errors="replace").strip()

    def run(self, argv: Sequence[str]) -> str:
        code, out = self.try_run(argv)
        if code != 0:
            raise InfrastructureError(
                f"in {self.target.name}'s network namespace, `{shlex.join(argv)}` failed (exit {code}): "
                f"{out.splitlines()[-1] if out else 'no output'}",
                hint="see `chaos images status` for the helper image; the worker must still run",
            )
        return out

    def run_all(self, argvs: Sequence[Sequence[str]]) -> None:
        """These commands in order, in one exec (a fault's rules land in one step,
        not one exec each: seconds under load); stops at the first that fails and
        raises naming it."""
        if not argvs:
            return
        script = "\n".join(
            f"{shlex.join(a)} || {{ echo {shlex.quote('failed: ' + shlex.join(a))}; exit 1; }}" for a in argvs
        )
        code, out = self.try_run(["sh", "-c", script])
        if code != 0:
            lines = out.splitlines()
            raise InfrastructureError(
                f"in {self.target.name}'s network namespace, "
                f"{lines[-1] if lines else 'a command failed'} ({lines[-2] if len(lines) > 1 else 'no output'})",
                hint="see `chaos images status` for the helper image; the worker must still run",
            )

    def try_all(self, argvs: Sequence[Sequence[str]]) -> None:
        """These commands in order, in one exec, whatever each answers (an undo: some may be gone already)."""
        if argvs:
            self.try_run(["sh", "-c", "\n".join(f"{shlex.join(a)} >/dev/null 2>&1" for a in argvs) + "\ntrue"])

    def capabilities(self) -> Capabilities:
        """Probed once per engine and process: every container of an engine runs on
        its one kernel, and an inject under load spends seconds per exec (measured:
        3-9 s for a whole inject at load 15-20), so later faults skip the probe. The
        interface is the one toward the proxy, the same in every worker of an engine (the
        run's network: eth0 on one host and in a swarm task, whose default route is eth1)."""
        if self._caps is None:
            key = str(getattr(getattr(self.client, "api", None), "base_url", ""))
            if key not in _PROBED:
                out = self.run(["python3", "-c", inspect.getsource(nfqueue), "probe", PROXY_ALIAS])
                _PROBED[key] = Capabilities.from_probe(out)
            self._caps = _PROBED[key]
        return self._caps

    def connections(self) -> str:
        """``ss -Htn state established`` in the namespace."""
        return self.run(["ss", "-Htn", "state", "established"])

    def counters(self, chains: list[str]) -> dict[str, int]:
        """Packets each rule of these chains matched: ``{"<chain> <rule index>": packets}`` (one exec)."""
        if not chains:
            return {}
        script = "\n".join(f"echo '== {c}'; iptables -w -L {shlex.quote(c)} -n -v -x 2>/dev/null" for c in chains)
        _, text = self.try_run(["sh", "-c", script])
        out: dict[str, int] = {}
        chain, index = None, 0
        for line in text.splitlines():
            if line.startswith("== "):
                chain, index = line[3:].strip(), 0
                continue
            words = line.split()
            if chain and words and words[0].isdigit():
                index += 1
                out[f"{chain} {index}"] = int(words[0])
        return out

    # --- the NFQUEUE shaper --------------------------------------------------

    def start_shaper(self, config: dict[str, Any], timeout_s: float = 15.0) -> None:
        queue = int(config["queue"])
        script = 'exec python3 -c "$1" serve "$2" >>' + SHAPER_LOG + " 2>&1"
        self.container.exec_run(["sh", "-c", script, "sh", inspect.getsource(nfqueue), json.dumps(config)], detach=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            code, _ = self.try_run(["test", "-s", f"/tmp/tfchaos-nfq-{queue}.pid"])
            if code == 0:
                return
            time.sleep(0.2)
        _, log = self.try_run(["cat", SHAPER_LOG])
        raise InfrastructureError(
            f"the packet shaper (NFQUEUE {queue}) did not start in {self.target.name}'s namespace: "
            f"{log.splitlines()[-1] if log else 'no output'}",
            hint="the kernel needs nfnetlink_queue (`modprobe nfnetlink_queue` on the Docker host)",
        )

    def stop_shaper(self, queue: int, timeout_s: float = 5.0) -> dict[str, Any] | None:
        """SIGTERM (it releases what it holds), then its counters."""
        pidfile = f"/tmp/tfchaos-nfq-{queue}.pid"
        self.try_run(["sh", "-c", f'kill -TERM "$(cat {pidfile})" 2>/dev/null; true'])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            code, _ = self.try_run(["sh", "-c", f'kill -0 "$(cat {pidfile})" 2>/dev/null'])
            if code != 0:
                break
            time.sleep(0.1)
        code, text = self.try_run(["cat", f"/tmp/tfchaos-nfq-{queue}.json"])
        try:
            return json.loads(text) if code == 0 else None
        except ValueError:
            return None

    def is_running(self) -> bool:
        """Whether the helper (and so the namespace it joined) is still up."""
        from chaos.backends.docker.api import is_running

        return is_running(self.container)

    def close(self) -> None:
        if self.container is None:
            return
        from docker.errors import APIError, NotFound

        try:
            self.container.remove(force=True, v=True)
        except NotFound:
            pass  # gone already: that is what we wanted
        except APIError as exc:
            if exc.status_code not in (404, 409):  # 409: being removed already
                raise
        self.container = None
