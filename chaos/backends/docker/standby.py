"""Worker containers made ahead of use (the runner's side of ``chaos.worker.standby``).

A standby is the next container of one worker slot, created and started early
at ``STANDBY_CPU_SHARES`` (it imports TensorFlow only on CPU nobody else
wants), off the run's network (it joins it under the worker's name at its go:
an address held while waiting could be one a partitioned worker freed), waiting
for its go file. When the slot's next container
is due, the standby serves only if it was created exactly as a fresh one would
be (``Recipe``: image, command, limits, and the environment less the keys the
go file carries); otherwise it is removed and a fresh container is created.
"""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import dataclass
from typing import Any

from chaos.worker.control import CONTROL_DIR
from chaos.worker.standby import GO_SIGNAL, LATE_ENV, STANDBY_ENV

GO_FILE = "go.json"
GO_SIGNAL_NAME = GO_SIGNAL.name  # sent after the go file is written
GO_PATH = f"{CONTROL_DIR}/{GO_FILE}"
STANDBY_CPU_SHARES = 2  # the kernel's minimum: idle CPU only, while others run
ACTIVE_CPU_SHARES = 1024  # Docker's default weight


@dataclass(frozen=True)
class Recipe:
    """Everything a worker container is created with, split into what is fixed
    at creation and what its go file may still say."""

    image: str
    command: tuple[str, ...] | None
    resources_json: str  # the container limits as canonical JSON: comparable, and given back as they came
    early_env: tuple[tuple[str, str], ...]
    late_env: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, image: str, env: dict[str, str], resources: dict[str, Any], command: list[str] | None) -> Recipe:
        early = {k: v for k, v in env.items() if k not in LATE_ENV}
        late = {k: v for k, v in env.items() if k in LATE_ENV}
        return cls(
            image,
            tuple(command) if command else None,
            json.dumps(resources, sort_keys=True),
            tuple(sorted(early.items())),
            tuple(sorted(late.items())),
        )

    @property
    def resources(self) -> dict[str, Any]:
        """The limits as Docker takes them (e.g. device_write_iops: a list of dicts)."""
        return json.loads(self.resources_json)

    def serves(self, due: Recipe) -> bool:
        """Whether a standby made from this recipe is the container ``due`` asks for."""
        return (self.image, self.command, self.resources_json, self.early_env) == (
            due.image,
            due.command,
            due.resources_json,
            due.early_env,
        )

    def standby_env(self) -> dict[str, str]:
        return {**dict(self.early_env), STANDBY_ENV: GO_PATH}

    def standby_resources(self) -> dict[str, Any]:
        return {**self.resources, "cpu_shares": STANDBY_CPU_SHARES}


def go_archive(late_env: dict[str, str]) -> bytes:
    """A tar holding the go file, for ``put_archive`` into ``CONTROL_DIR``."""
    data = json.dumps(late_env).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(GO_FILE)
        info.size = len(data)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
