"""The run metadata the checks judge against (chaos.timeline.RunInfo).

For the built-in harness it is the scenario's training settings. A user's job
says what it trains in its plan event (the agent reports fit's epochs and
steps; a custom loop's ``report.plan``); what it does not say stays 0, and a
check that needs it is unknown, naming what is missing.

What a job with the agent could report but did not (no Keras ``fit`` and no
``report`` call: no steps, no done, no weights digest) is ``unproduced``,
with why: seen in its uninterrupted run, or in this run when every worker
exited 0. A check that needs it is unknown with that reason, never failed for
an event the job never sends.
"""

from __future__ import annotations

from dataclasses import replace

from chaos.events import Event, ExitEvent, PlanEvent
from chaos.scenario.model import Scenario
from chaos.timeline import RunInfo
from chaos.workload.evidence import unproduced


def ended_cleanly(events: list[Event], workers: int) -> bool:
    """Every worker's last exit was 0: the job ran to its end (not stopped at teardown, not failed)."""
    last = {e.source: e.exit_code for e in events if isinstance(e, ExitEvent)}
    return all(last.get(f"worker-{i}") == 0 for i in range(workers))


def unproduced_of(
    scenario: Scenario, events: list[Event], evidence: tuple[str, ...], reference=None
) -> tuple[tuple[str, str], ...]:
    """What the job did not produce, among what it is judged to report (``evidence``: RunInfo's)."""
    found = dict(reference.unproduced) if reference is not None else {}
    workload = scenario.cluster.workload
    if workload is not None and ended_cleanly(events, scenario.cluster.workers):
        found = {**unproduced(events), **found}
    if workload is not None:  # what the workload's kind cannot report is said by its evidence already
        found = {k: v for k, v in found.items() if k in evidence}
    return tuple(sorted(found.items()))


def run_info(scenario: Scenario, events: list[Event], reference=None) -> RunInfo:
    info = _run_info(scenario, events, reference)
    missing = unproduced_of(scenario, events, info.evidence, reference)
    return replace(info, unproduced=missing) if missing else info


def _run_info(scenario: Scenario, events: list[Event], reference=None) -> RunInfo:
    ref = {
        "reference_digest": reference.digest if reference else None,
        "reference_final_loss": reference.final_loss if reference else None,
        "reference_curve": reference.curve if reference else (),
    }
    workload = scenario.cluster.workload
    if workload is None:
        return scenario.run_info(**ref)
    plans = [e for e in events if isinstance(e, PlanEvent)]
    plan = plans[-1] if plans else PlanEvent(t=0.0, source="")
    evidence, judged_as = workload.judged_as(events)  # agent: none's, where the agent could not see the steps
    return RunInfo(
        num_workers=scenario.cluster.workers,
        steps_per_epoch=plan.steps_per_epoch,
        epochs=plan.epochs,
        save_interval_steps=plan.save_every_steps,
        total_steps=plan.total_steps,
        evidence=tuple(e.value for e in evidence),
        workload=judged_as,
        **ref,
    )
