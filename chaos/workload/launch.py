"""How the cluster starts each worker's training process: the one thing the
Docker cluster needs to know of a workload.

The built-in harness is ``Launch()``: the image's own entrypoint (``python -m
chaos.worker``), its settings passed as an environment variable, backups on
``/backup``, JSON events on stdout. A user's job is a ``Launch`` made from its
``WorkloadSpec``: its command, its environment, its checkpoint directory, the
agent switched on (or log parsing when there is none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chaos.agent.layer import AGENT_DIR
from chaos.workload.evidence import EVERYTHING, Evidence
from chaos.workload.logparse import LineParser
from chaos.workload.spec import ProgressPattern, WorkloadSpec

BUILTIN_CHECKPOINT_DIR = "/backup"


@dataclass(frozen=True)
class Launch:
    command: tuple[str, ...] | None = None  # None: the image's own entrypoint and command
    env: dict[str, str] = field(default_factory=dict)  # for every worker
    checkpoint_dir: str = BUILTIN_CHECKPOINT_DIR  # where the run's shared volume is mounted
    harness_settings: bool = True  # pass the harness's WorkerSettings (built-in only)
    evidence: frozenset[Evidence] = EVERYTHING
    progress: ProgressPattern | None = None
    description: str = "the built-in harness"

    @property
    def builtin(self) -> bool:
        return self.harness_settings

    @property
    def reports_start(self) -> bool:
        """Bring-up waits for start events (TF imported) only from a workload that sends them."""
        return Evidence.START in self.evidence

    def parser(self, source: str) -> LineParser:
        # A workload that reports its own errors (harness, agent) is not parsed
        # for tracebacks: the same error would be counted twice.
        return LineParser(source, self.progress, parse_errors=Evidence.START not in self.evidence)

    @classmethod
    def of(cls, spec: WorkloadSpec) -> Launch:
        env = dict(spec.env)
        env["CHAOS_CHECKPOINT_DIR"] = spec.checkpoint_dir
        if spec.agent == "auto":
            env["CHAOS_AGENT"] = "1"
            if "PYTHONPATH" in env:
                # A scenario's PYTHONPATH replaces the image's, which put the agent
                # first: keep the agent first or its sitecustomize never runs.
                env["PYTHONPATH"] = AGENT_DIR + ":" + env["PYTHONPATH"]
        return cls(
            command=tuple(spec.command) if spec.command else None,
            env=env,
            checkpoint_dir=spec.checkpoint_dir,
            harness_settings=False,
            evidence=spec.evidence,
            progress=spec.progress,
            description=spec.describe(),
        )
