"""How the cluster starts each worker's training process: the one thing the
Docker cluster needs to know of a workload.

The built-in harness is ``Launch()``: the image's own entrypoint (``python -m
chaos.worker``), its settings passed as an environment variable, backups on
``/backup``, JSON events on stdout. A user's job is a ``Launch`` made from its
``WorkloadSpec``: its command, its environment, its checkpoint directory, the
agent switched on (or log parsing when there is none).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from chaos.agent.layer import AGENT_DIR
from chaos.events import STEPS_UNOBSERVED, DoneEvent, Event, LogLine, NoticeEvent, PlanEvent, StepEvent
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

    def parser(self, source: str) -> LineParser | ProgressFallback:
        # A workload that reports its own errors (harness, agent) is not parsed
        # for tracebacks: the same error would be counted twice.
        parser = LineParser(source, self.progress, parse_errors=Evidence.START not in self.evidence)
        if self.progress is not None and Evidence.START in self.evidence:
            return ProgressFallback(parser)  # the agent's: the pattern's steps only where it sees none
        return parser

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


class ProgressFallback:
    """A job with the agent and a progress pattern: the steps and done read from its log lines
    count only once the agent said it cannot see this process's steps (a NoticeEvent of topic
    STEPS_UNOBSERVED, at TF's import) and while no step or plan of the agent's (Keras fit's, a
    report call's) has come; otherwise the agent reports them and a logged step would count
    each step twice. A logged step is marked ``logged``. Feed and close as a LineParser."""

    def __init__(self, parser: LineParser) -> None:
        self.parser = parser
        self.unobserved = False
        self.reported = False

    def feed(self, line: str, t: float | None = None) -> list[Event]:
        return self._keep(self.parser.feed(line, t))

    def close(self) -> list[Event]:
        return self._keep(self.parser.close())

    def _keep(self, events: list[Event]) -> list[Event]:
        logged = any(isinstance(e, LogLine) for e in events)  # the pattern matches plain lines only
        out = []
        for e in events:
            if isinstance(e, NoticeEvent) and e.topic == STEPS_UNOBSERVED:
                self.unobserved = True
            elif not logged and isinstance(e, (StepEvent, PlanEvent)):
                self.reported = True
            if logged and isinstance(e, (StepEvent, DoneEvent)):
                if not self.unobserved or self.reported:
                    continue
                if isinstance(e, StepEvent):
                    e = replace(e, logged=True)
            out.append(e)
        return out
