"""Run one fault-free training on a fresh cluster of a backend: the baseline
job, and the reference (uninterrupted) digest that recovery checks compare against."""

from __future__ import annotations

import time
from dataclasses import dataclass

from chaos.backends.base import Backend
from chaos.backends.spec import Deployment
from chaos.errors import InfrastructureError
from chaos.eventlog import EventLog
from chaos.events import DoneEvent, Event, ExitEvent, StepEvent
from chaos.text import first_line


@dataclass(frozen=True)
class TrainingResult:
    digests: dict[str, str]  # worker -> final weights digest
    bring_up_s: float  # cluster creation until the first training step
    training_s: float  # first step until every worker is done
    total_s: float
    events: list[Event]

    @property
    def identical(self) -> bool:
        return len(set(self.digests.values())) == 1 and bool(self.digests)


def finished(num_slots: int):
    """Predicate: every worker exited (after its done event, if it sends one), or one failed."""

    def check(events: list[Event]) -> bool:
        exited = [e for e in events if isinstance(e, ExitEvent)]
        return len({e.source for e in exited}) >= num_slots or any(e.exit_code != 0 for e in exited)

    return check


def run_training(
    spec: Deployment, backend: Backend, *, events: EventLog | None = None, timeout_s: float = 300
) -> TrainingResult:
    events = events or EventLog()
    t0 = time.time()
    with backend.cluster(spec, events=events) as cluster:
        cluster.start_workers()
        if not events.wait_for(finished(spec.num_slots), timeout_s):
            raise InfrastructureError(
                f"training did not finish within {timeout_s:g}s",
                hint="a hang with no error usually means a worker cannot reach a peer; "
                "check the proxy and the worker logs",
            )
        history = events.snapshot()
    end = time.time()
    failures = [e for e in history if isinstance(e, ExitEvent) and e.exit_code != 0]
    if failures:
        errors = [e for e in history if e.kind == "error"]
        detail = "; ".join(
            f"{e.source}: {e.error_class.rsplit('.', 1)[-1]}: {first_line(e.message)}" for e in errors[:2]
        )
        raise InfrastructureError(
            f"a fault-free training run failed ({failures[0].source} exited {failures[0].exit_code}): the "
            f"workload itself fails, not from a fault; its error: {detail}",
            hint="run the job's image by hand with the same command to see why (the whole traceback is in the "
            "worker's log); for the built-in harness, check its image with `chaos images status`",
        )
    steps = [e.t for e in history if isinstance(e, StepEvent)]
    done = [e for e in history if isinstance(e, DoneEvent)]
    first_step = min(steps) if steps else end
    return TrainingResult(
        digests={e.source: e.weights_digest for e in done},
        bring_up_s=first_step - t0,
        training_s=max(e.t for e in done) - first_step if done else 0.0,
        total_s=end - t0,
        events=history,
    )
