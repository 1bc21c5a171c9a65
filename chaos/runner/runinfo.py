"""The run metadata the checks judge against (chaos.timeline.RunInfo).

For the built-in harness it is the scenario's training settings. A user's job
says what it trains in its plan event (the agent reports fit's epochs and
steps; a custom loop's ``report.plan``); what it does not say stays 0, and a
check that needs it is unknown, naming what is missing.
"""

from __future__ import annotations

from chaos.events import Event, PlanEvent
from chaos.scenario.model import Scenario
from chaos.timeline import RunInfo


def run_info(scenario: Scenario, events: list[Event], reference=None) -> RunInfo:
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
    return RunInfo(
        num_workers=scenario.cluster.workers,
        steps_per_epoch=plan.steps_per_epoch,
        epochs=plan.epochs,
        save_interval_steps=plan.save_every_steps,
        total_steps=plan.total_steps,
        evidence=tuple(e.value for e in workload.evidence),
        workload=f"agent: {workload.agent}",
        **ref,
    )
