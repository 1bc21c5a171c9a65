"""The seam's resource limits in Docker's host-config keys.

CPU is a CFS quota, not ``nano_cpus``: a short period spreads the quota evenly
(every step slower, as on a slow CPU, not a few fast steps then a 100 ms
freeze), and a throttle then changes the quota alone.
"""

from __future__ import annotations

from typing import Any

from chaos.backends.spec import Limits, WriteLimit

CPU_PERIOD_US = 10_000
# Docker cannot remove a memory limit from a running container: lifting one raises it out of reach.
UNLIMITED_MEMORY = 1 << 40


def cpu(cpus: float) -> dict[str, Any]:
    return {"cpu_period": CPU_PERIOD_US, "cpu_quota": max(1000, int(cpus * CPU_PERIOD_US))}


def memory(limit_bytes: int) -> dict[str, Any]:
    return {"mem_limit": limit_bytes, "memswap_limit": limit_bytes}  # no swap to escape into


def at_create(limits: Limits | None) -> dict[str, Any]:
    """What a worker's container is created with for ``limits``."""
    out: dict[str, Any] = {}
    if limits is not None and limits.cpus is not None:
        out |= cpu(limits.cpus)
    if limits is not None and limits.memory_bytes is not None:
        out |= memory(limits.memory_bytes)
    return out


def writes(limit: WriteLimit) -> dict[str, Any]:
    out: dict[str, Any] = {"device_write_iops": [{"Path": limit.device, "Rate": limit.iops}]}
    if limit.bytes_per_s:
        out["device_write_bps"] = [{"Path": limit.device, "Rate": limit.bytes_per_s}]
    return out


def cpu_as_created(created: dict[str, Any]) -> dict[str, Any]:
    """The update that gives a running container its created CPU limit back (none: no quota)."""
    back = {k: created[k] for k in ("cpu_period", "cpu_quota") if k in created}
    return back or {"cpu_quota": -1}


def memory_as_created(created: dict[str, Any]) -> dict[str, Any]:
    """The update that gives a running container its created memory limit back."""
    return {"mem_limit": created.get("mem_limit", UNLIMITED_MEMORY), "memswap_limit": created.get("memswap_limit", -1)}
