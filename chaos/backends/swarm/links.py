"""The link between two nodes of a swarm, cut or degraded (the node_link fault).

Tasks on two nodes talk over the overlay, whose packets travel between the nodes as
VXLAN (UDP, port 4789). Dropping those between node A and node B, in node A's own
network namespace and both ways, fails the A-B link alone: A and B still reach every
other node (the proxy's among them), and the swarm's control traffic (TCP 2377, 7946)
still flows, so neither node is marked down. A share below 100 % drops packets at
random (iptables' statistic match), a lossy link.

Pure: the rules as iptables arguments, and the packets they dropped read back from
``iptables -L -v -x -n`` (so the report says whether the fault reached any traffic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VXLAN_PORT = 4789  # Swarm's default data-path port


@dataclass(frozen=True)
class Link:
    """A degraded link: rules on ``node`` (toward ``peer`` at ``peer_addr``), tagged ``tag``."""

    node: str
    peer: str
    peer_addr: str
    loss_percent: float
    tag: str

    def describe(self) -> str:
        how = "cut" if self.loss_percent >= 100 else f"degraded ({self.loss_percent:g} % of packets dropped)"
        return f"the link between {self.node} and {self.peer} {how}"


def rule_specs(link: Link) -> list[list[str]]:
    """Each rule as ``[chain, match..., -j, DROP]``: the overlay's packets to the peer node, and from it."""
    chance = (
        []
        if link.loss_percent >= 100
        else ["-m", "statistic", "--mode", "random", "--probability", f"{link.loss_percent / 100:.4f}"]
    )
    mark = ["-m", "comment", "--comment", link.tag]
    udp = ["-p", "udp", "--dport", str(VXLAN_PORT)]
    return [
        ["OUTPUT", *udp, "-d", link.peer_addr, *chance, *mark, "-j", "DROP"],
        ["INPUT", *udp, "-s", link.peer_addr, *chance, *mark, "-j", "DROP"],
    ]


def apply_commands(link: Link) -> list[list[str]]:
    return [["iptables", "-w", "-I", chain, "1", *spec] for chain, *spec in rule_specs(link)]


def undo_commands(link: Link) -> list[list[str]]:
    return [["iptables", "-w", "-D", chain, *spec] for chain, *spec in rule_specs(link)]


COUNT_COMMAND = ["iptables", "-w", "-L", "-v", "-x", "-n"]


def dropped_packets(listing: str, tag: str) -> dict[str, int]:
    """Packets each chain's rule tagged ``tag`` dropped, from ``iptables -L -v -x -n``."""
    counts: dict[str, int] = {}
    chain = ""
    for line in listing.splitlines():
        head = re.match(r"Chain (\S+)", line)
        if head:
            chain = head.group(1)
            continue
        if f"/* {tag} */" in line:
            words = line.split()
            if words and words[0].isdigit():
                counts[chain] = counts.get(chain, 0) + int(words[0])
    return counts
