"""Run one scenario end to end and return its Report (never raises for a
failed check; raises ChaosError subclasses only for broken infrastructure)."""

from __future__ import annotations

import time
from pathlib import Path

from chaos.checks import run_checks
from chaos.cluster.docker_cluster import ClusterSpec, DockerCluster
from chaos.cluster.eventlog import EventLog
from chaos.events import LogLine, PhaseEvent, RUNNER
from chaos.report import build_report
from chaos.runner.reference import uninterrupted_reference
from chaos.runner.supervisor import Supervisor
from chaos.scenario.model import Scenario
from chaos.timeline import Timeline
from chaos.worker.settings import WorkerSettings

RECOVERY_NEEDS_REFERENCE = {"matches_uninterrupted"}


def cluster_spec(scenario: Scenario, images: dict[str, str], proxy_image: str) -> ClusterSpec:
    c = scenario.cluster
    return ClusterSpec(
        images=tuple(images[c.tf_version_of(i)] for i in range(c.workers)),
        proxy_image=proxy_image,
        settings=WorkerSettings(**c.worker_settings()),
        bring_up_timeout_s=scenario.timeouts.bring_up,
    )


def run_scenario(
    scenario: Scenario,
    file: str,
    *,
    images: dict[str, str],
    proxy_image: str,
    report_dir: Path | None = None,
    events: EventLog | None = None,
    progress=None,
):
    events = events or EventLog()
    spec = cluster_spec(scenario, images, proxy_image)
    reference = None
    if any(check.name in RECOVERY_NEEDS_REFERENCE for check in scenario.recover):
        from chaos.cluster import docker_api

        reference = uninterrupted_reference(spec, docker_api.connect(), progress)

    outcome = None
    error = None
    with DockerCluster(spec, events=events) as cluster:
        supervisor = Supervisor(scenario, cluster, progress)
        try:
            outcome = supervisor.run()
            if not outcome.finished:
                error = f"training did not complete: {outcome.reason}"
        finally:
            supervisor.heal_all()
            cluster.record(PhaseEvent(t=time.time(), source=RUNNER, phase="teardown"))
    timeline = Timeline.from_events(
        scenario.run_info(
            reference_digest=reference.digest if reference else None,
            reference_final_loss=reference.final_loss if reference else None,
        ),
        events.snapshot(),
    )
    verdicts = run_checks(scenario.checks, timeline)
    artifacts = {}
    if report_dir is not None:
        artifacts = write_worker_logs(report_dir / scenario.name, events)
    # A run that did not complete is not an error if the scenario expects no
    # recovery (no recover checks): the symptom was the point.
    report_error = error if scenario.recover else None
    return build_report(scenario, file, verdicts, timeline, artifacts=artifacts, error=report_error)


def write_worker_logs(directory: Path, events: EventLog) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {}
    for e in events.snapshot():
        if e.source == RUNNER:
            continue
        text = e.text if isinstance(e, LogLine) else e.to_json()
        lines.setdefault(e.source, []).append(text)
    out = {}
    for source, text in sorted(lines.items()):
        path = directory / f"{source}.log"
        path.write_text("\n".join(text) + "\n")
        out[f"{source} log"] = str(path)
    return out
