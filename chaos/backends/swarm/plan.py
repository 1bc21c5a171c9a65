"""What a local swarm is made of, as values: names, labels, the node
containers' create arguments and the engine command they run. Pure (no
engine), so every argument is unit-tested.

Why each node argument (measured on this machine, docs/backends.md):
- ``--privileged`` is refused here (the host lacks CAP_SYS_RESOURCE), so a node
  gets the four capabilities an inner engine needs, seccomp and AppArmor
  unconfined, and the host's cgroup tree read-write (cgroup v1: without it the
  inner runc cannot create its cgroups).
- /var/lib/docker is a named volume per node (the inner engine's overlay2
  cannot sit on the node's own overlay root).
- The inner engine listens on a unix socket in a host folder bound into the
  node (``docker_host``), not on TCP: no unauthenticated engine API on a
  network other containers share, and no start-up delay (dockerd 20.10 sleeps
  before listening on TCP without TLS).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from chaos import LABEL_PROJECT, LABEL_RUN, PROJECT
from chaos.errors import ScenarioError

MIN_NODES, MAX_NODES = 1, 8
DEFAULT_NODES = 3
DEFAULT_NAME = "local"
LABEL_SWARM = "io.tfchaos.swarm"
LABEL_ROLE = "io.tfchaos.role"
LABEL_NODE = "io.tfchaos.node"
ROLE_NODE = "swarm-node"
ROLE_STORE = "swarm-store"

NODE_CAPS = ("SYS_ADMIN", "NET_ADMIN", "MKNOD", "SYS_PTRACE")
NODE_SECURITY_OPT = ("seccomp=unconfined", "apparmor=unconfined")
CGROUP_ROOT = "/sys/fs/cgroup"
FUSE_DEVICE = "/dev/fuse"
SOCKET_DIR_IN_NODE = "/run/tfchaos"
SOCKET_NAME = "docker.sock"
SWARM_PORT = 2377

# The shared checkpoint store: an SFTP export (openssh-server in a container from the
# node image, its data on a volume) that every node mounts with sshfs at STORE_IN_NODE;
# tasks bind-mount that folder. Caches off: with sshfs's default caches a TF job's
# chief on one node failed its first save in a folder another node had seen removed
# (NotFoundError ... ckpt-1_temp, docs/backends.md).
STORE_IN_NODE = "/mnt/tfchaos-store"
STORE_KEYS_IN_NODE = "/run/tfchaos-store"
STORE_EXPORT = "/export"
SSHFS_OPTIONS = (
    "allow_other",
    "reconnect",
    "dir_cache=no",
    "entry_timeout=0",
    "attr_timeout=0",
    "negative_timeout=0",
    "StrictHostKeyChecking=no",
    "UserKnownHostsFile=/dev/null",
    f"IdentityFile={STORE_KEYS_IN_NODE}/id",
)
STORE_SCRIPT = f"""set -e
mkdir -p /run/sshd {STORE_EXPORT}
chmod 777 {STORE_EXPORT}
[ -f /keys/id ] || ssh-keygen -q -t ed25519 -N '' -f /keys/id
install -d -m 700 /root/.ssh
cp /keys/id.pub /root/.ssh/authorized_keys
ssh-keygen -A >/dev/null
exec /usr/sbin/sshd -D -e
"""

# Inside the swarm: the overlay every task joins. This kernel has VXLAN but no
# IPVS, so services run with endpoint mode dnsrr (no VIP, no routing mesh).
OVERLAY_NETWORK = "tfchaos"
OVERLAY_MTU = 1400
ENDPOINT_MODE = "dnsrr"

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,23}$")
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the NUL


def check_nodes(value: Any) -> int:
    """``--nodes``: a whole number from MIN_NODES to MAX_NODES."""
    try:
        n = int(str(value).strip())
    except ValueError:
        n = None
    if n is None or not MIN_NODES <= n <= MAX_NODES:
        raise ScenarioError(
            f"--nodes must be a whole number from {MIN_NODES} to {MAX_NODES}, not {value!r}",
            hint=f"e.g. `chaos swarm up --nodes {DEFAULT_NODES}` (each node is a container running its own "
            "Docker engine: on a 2-core machine keep to 3)",
        )
    return n


def check_name(value: str) -> str:
    """``--name``: lower-case letters, digits and dashes, 1 to 24 characters."""
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise ScenarioError(
            f"swarm name {value!r} is not valid: use 1 to 24 lower-case letters, digits or dashes, "
            "starting with a letter or digit",
            hint=f"e.g. --name {DEFAULT_NAME} (the default) or --name ci-2",
        )
    return value


# What a node's engine keeps in /run between its start and its end (not the host's socket
# folder, /run/tfchaos): emptied before each start, as a reboot empties /run.
RUNTIME_STATE = ("/run/docker", "/run/docker.pid", "/run/docker.sock", "/run/containerd")


@dataclass(frozen=True)
class SwarmPlan:
    """One local swarm: ``nodes`` node containers named after ``name``.

    ``owner``: the owner labels (chaos.backends.docker.ownership) of the process
    the swarm belongs to (the test fixture's: ``chaos clean`` removes it once that
    process is gone), or none (``chaos swarm up``: it lives until ``chaos swarm down``).
    """

    name: str
    nodes: int
    socket_root: str  # host folder holding one folder per node with its engine's socket
    owner: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        check_name(self.name)
        check_nodes(self.nodes)
        longest = self.socket_path(self.nodes)
        if len(longest) > MAX_SOCKET_PATH:
            raise ScenarioError(
                f"the node engines' socket path {longest} is {len(longest)} characters, "
                f"longer than a unix socket allows ({MAX_SOCKET_PATH})",
                hint="set TFCHAOS_CACHE to a shorter folder, or use a shorter --name",
            )

    @property
    def prefix(self) -> str:
        return f"{PROJECT}-swarm-{self.name}"

    @property
    def run_id(self) -> str:
        """The run id its objects carry: ``chaos clean --run swarm-<name>`` removes them."""
        return f"swarm-{self.name}"

    @property
    def network(self) -> str:
        """The host's bridge network the node containers share (swarm traffic: 2377, 7946, 4789)."""
        return self.prefix

    def indices(self) -> range:
        return range(1, self.nodes + 1)

    def node_container(self, i: int) -> str:
        return f"{self.prefix}-node-{i}"

    def hostname(self, i: int) -> str:
        """The node's host name, which is also its swarm node name (placement: ``node.hostname==node-2``)."""
        return f"node-{i}"

    def volume(self, i: int) -> str:
        return f"{self.prefix}-node-{i}-docker"

    def socket_dir(self, i: int) -> str:
        return os.path.join(self.socket_root, self.name, f"node-{i}")

    def socket_path(self, i: int) -> str:
        return os.path.join(self.socket_dir(i), SOCKET_NAME)

    def docker_host(self, i: int = 1) -> str:
        """DOCKER_HOST for node ``i``'s engine (node 1 is the manager)."""
        return f"unix://{self.socket_path(i)}"

    @property
    def store_container(self) -> str:
        """The shared store's container, also its name on the nodes' network."""
        return f"{self.prefix}-store"

    @property
    def store_volume(self) -> str:
        return f"{self.prefix}-store-data"

    @property
    def store_keys(self) -> str:
        """Host folder with the key pair the nodes log in to the store with."""
        return os.path.join(self.socket_root, self.name, "store")

    def store_create(self, image: str) -> dict[str, Any]:
        """Keyword arguments for ``client.containers.create`` of the shared store."""
        return {
            "image": image,
            "entrypoint": ["sh", "-c"],
            "command": [STORE_SCRIPT],
            "name": self.store_container,
            "hostname": "store",
            "labels": {**self.labels(), LABEL_ROLE: ROLE_STORE},
            "network": self.network,
            "volumes": {
                self.store_volume: {"bind": STORE_EXPORT, "mode": "rw"},
                self.store_keys: {"bind": "/keys", "mode": "rw"},
            },
            "detach": True,
        }

    def store_mount_command(self) -> list[str]:
        """What a node runs to mount the store at STORE_IN_NODE."""
        return [
            "sh",
            "-c",
            f"mkdir -p {STORE_IN_NODE} && exec sshfs -o {','.join(SSHFS_OPTIONS)} "
            f"root@{self.store_container}:{STORE_EXPORT} {STORE_IN_NODE}",
        ]

    def labels(self, node: int | None = None) -> dict[str, str]:
        out = {LABEL_PROJECT: PROJECT, LABEL_RUN: self.run_id, LABEL_SWARM: self.name, **dict(self.owner)}
        if node is not None:
            out |= {LABEL_ROLE: ROLE_NODE, LABEL_NODE: str(node)}
        return out

    def dockerd_command(self) -> list[str]:
        """The inner engine: the local socket (for ``docker exec NODE docker ...``) and
        the one bound to the host (``docker_host``). A node killed (node_lost) keeps its
        engine's runtime state in /run, which a machine's reboot empties: an engine that
        finds its old pid file refuses to start, and one that finds containerd's waits for
        it and gives up (`failed to start containerd: timeout waiting`). Removed first."""
        return [
            "sh",
            "-c",
            f'rm -rf {" ".join(RUNTIME_STATE)} && exec dockerd "$@"',
            "dockerd",
            "--host",
            "unix:///var/run/docker.sock",
            "--host",
            f"unix://{SOCKET_DIR_IN_NODE}/{SOCKET_NAME}",
        ]

    def node_create(self, i: int, image: str, *, fuse: bool = True, store: bool = False) -> dict[str, Any]:
        """Keyword arguments for ``client.containers.create`` of node ``i``
        (``fuse``: the host has /dev/fuse to hand to the node; ``store``: the
        shared store's key is bound in, read-only)."""
        args = {
            "image": image,
            "command": self.dockerd_command(),
            "name": self.node_container(i),
            "hostname": self.hostname(i),
            "labels": self.labels(i),
            "network": self.network,
            "cap_add": list(NODE_CAPS),
            "security_opt": list(NODE_SECURITY_OPT),
            "volumes": {
                self.volume(i): {"bind": "/var/lib/docker", "mode": "rw"},
                CGROUP_ROOT: {"bind": CGROUP_ROOT, "mode": "rw"},
                self.socket_dir(i): {"bind": SOCKET_DIR_IN_NODE, "mode": "rw"},
            },
            "detach": True,
        }
        if store:
            args["volumes"][self.store_keys] = {"bind": STORE_KEYS_IN_NODE, "mode": "ro"}
        if fuse:
            # FUSE inside the node: a network filesystem mounted on every node by a userspace
            # client (sshfs) is the shared checkpoint store here (the kernel has no NFS client).
            args["devices"] = [f"{FUSE_DEVICE}:{FUSE_DEVICE}:rwm"]
        return args

    def overlay_create(self) -> dict[str, Any]:
        """Keyword arguments for the manager's ``client.networks.create`` of the overlay."""
        return {
            "name": OVERLAY_NETWORK,
            "driver": "overlay",
            "attachable": True,
            "options": {"com.docker.network.driver.mtu": str(OVERLAY_MTU)},
            "labels": self.labels(),
        }


def describe_access(plan: SwarmPlan, *, store: bool = False) -> list[str]:
    """How to reach a swarm that is up, as lines to print."""
    lines = (
        [
            f"  shared store: {STORE_IN_NODE} on every node (sshfs of {plan.store_container}); in a task: "
            f"--mount type=bind,src={STORE_IN_NODE},dst=/backup"
        ]
        if store
        else []
    )
    return [
        f"swarm {plan.name}: {plan.nodes} node(s), manager {plan.hostname(1)}",
        f"  export DOCKER_HOST={plan.docker_host(1)}",
        f"  overlay network: {OVERLAY_NETWORK} (attachable, MTU {OVERLAY_MTU}); services need "
        f"--endpoint-mode {ENDPOINT_MODE} (no IPVS here)",
        f"  place a task on a node: --constraint node.hostname=={plan.hostname(min(2, plan.nodes))}",
        *lines,
        "  remove it: chaos swarm down" + ("" if plan.name == DEFAULT_NAME else f" --name {plan.name}"),
    ]
