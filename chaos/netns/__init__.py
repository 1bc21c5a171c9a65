"""Packet-level faults inside a worker's own network namespace.

- ``rules``: pure rule building: from a fault's parameters and what the kernel
  can do (``Capabilities``) to the iptables/tc argument lists that apply it and
  those that undo it, and which implementation serves it (netem, iptables'
  statistic match, NFQUEUE in userspace), or an error naming what is missing.
- ``nfqueue``: the userspace packet shaper (stdlib only) that runs in the helper
  where the kernel has no netem: delay, reorder, corruption, duplication, loss
  with correlation.
- ``access``: the verbs a fault may use in a worker's namespace (``Netns``),
  reached through ``cluster.netns(index)``.
- ``traffic``: measured traffic (numbered datagrams, round trips, a TCP
  stream) for the integration tests.

The Docker side lives with the Docker backend: the helper container that
shares a worker's network namespace (chaos.backends.docker.netns:
``network_mode: container:<worker>``, NET_ADMIN only there; the worker stays
unprivileged), labelled with the run so teardown and ``chaos clean`` remove it;
and its image (chaos.images.netns_helper: the project's Debian base + iptables,
ethtool, built offline from Debian packages fetched on the host by apt).
"""
