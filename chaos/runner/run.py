"""The one way to run a scenario: ``run(scenario, file, options) -> Report``.

The CLI, the pytest plugin and the benchmarks all call this. It never raises
for anything that goes wrong in the run (a missing image, a dead Docker
engine, a reference run that lost a worker, a fault that could not be
injected): that becomes a Report with status ``error``, the reason, every
check ``unknown`` (not judged) and the partial timeline, so a broken scenario
is counted, never missing. Only an interrupt (Ctrl-C, SIGTERM, ``Cancelled``)
propagates, after teardown.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from chaos.backends.base import Backend
from chaos.backends.catalog import DEFAULT_BACKEND, too_many_workers
from chaos.backends.refusals import refusal
from chaos.backends.spec import Deployment
from chaos.checks import run_checks
from chaos.checks.verdict import unknown
from chaos.errors import ChaosError, ScenarioError
from chaos.eventlog import EventLog
from chaos.events import RUNNER, PhaseEvent
from chaos.report import Report, build_report, outputs
from chaos.runner.reference import uninterrupted_reference
from chaos.runner.runinfo import run_info
from chaos.runner.supervisor import Supervisor
from chaos.scenario.model import Scenario
from chaos.timeline import Timeline
from chaos.topology import BACKEND_MAX_WORKERS
from chaos.worker.settings import WorkerSettings
from chaos.workload.evidence import Evidence
from chaos.workload.launch import Launch
from chaos.workload.spec import WorkloadSpec

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunOptions:
    """What is the same for every scenario of a run."""

    proxy_image: str | None = None  # another Toxiproxy-API image; None: ours, built like the workers
    report_dir: Path | None = None  # JSON report and worker logs per scenario
    backend: Backend | None = None  # where clusters come from; None: Docker on this host

    def cluster_backend(self) -> Backend:
        if self.backend is not None:
            return self.backend
        from chaos.backends.docker.backend import DockerBackend

        return DockerBackend()

    @property
    def backend_name(self) -> str:
        return getattr(self.backend, "name", DEFAULT_BACKEND) if self.backend is not None else DEFAULT_BACKEND

    @property
    def our_proxy(self) -> bool:
        return self.proxy_image is None


def needs_reference(scenario: Scenario) -> bool:
    return any(getattr(check, "needs_reference", False) for check in scenario.checks)


@dataclass(frozen=True)
class Images:
    """What the cluster runs: an image per worker, the proxy, and the prepared
    form of every other image a fault asks for (a user's image gets the agent)."""

    workers: tuple[str, ...]
    proxy: str
    others: dict[str, str]


def workload_of(scenario: Scenario) -> WorkloadSpec | None:
    """The scenario's workload, its relative paths resolved against the scenario file's folder."""
    workload = scenario.cluster.workload
    if workload is None or workload.based:
        return workload
    return workload.based_at(Path(scenario.source).parent if scenario.source else Path.cwd())


def with_cluster_env(launch: Launch, env: dict[str, str]) -> Launch:
    """``cluster.env`` under the launch's own (a job's env wins: it is the job's config)."""
    return replace(launch, env={**env, **launch.env}) if env else launch


def deployment_of(scenario: Scenario, images: Images) -> Deployment:
    c = scenario.cluster
    workload = workload_of(scenario)
    return Deployment(
        images=images.workers,
        proxy_image=images.proxy,
        settings=WorkerSettings(**c.worker_settings()),
        bring_up_timeout_s=scenario.timeouts.bring_up,
        launch=with_cluster_env(Launch() if workload is None else Launch.of(workload), c.env),
        image_map=images.others,
        backup_volume_mb=max((s.fault.backup_volume_mb() for s in scenario.faults), default=0),
        resources={i: c.resources.limits() for i in range(len(images.workers))} if c.resources.limits() else {},
        topology=c.topology(),
        # Workers made ahead (chaos.backends.docker.standby), except where step times are
        # judged: a standby's import would take CPU the measurement counts.
        # Nor where a packet fault must be in a worker's namespace before TF connects
        # (at bring_up): a standby has TF imported and connects within a second of its
        # go, before the fault's helper is in (chaos.faults.packet); a fresh worker
        # imports TF first (seconds).
        standby=not any(check.timing_sensitive for check in scenario.checks)
        and not any(s.at.before_start and getattr(s.fault, "needs_netns_helper", False) for s in scenario.faults),
        restarted_by=c.recovery.by,
        max_restarts=c.recovery.max_restarts,
        watched_steps=watched_steps(scenario),
    )


def watched_steps(scenario: Scenario) -> tuple[int, ...]:
    """The steps the faults' triggers name (``at`` and ``until``): the runner acts on them."""
    triggers = [t for s in scenario.faults for t in (s.at, s.until) if t is not None]
    return tuple(sorted({t.step for t in triggers if t.tag == "step"}))


def prepare_images(scenario: Scenario, options: RunOptions, progress: Progress | None) -> Images:
    """Worker images (the harness's per TF version, built or reused; or the
    user's job, built if asked, with the agent layered on), and the proxy
    image: ours built like the workers, a user's only required to exist."""
    from chaos.images import PROXY_IMAGE, worker_image_tag

    refuse_unsupported(scenario, options.backend_name)
    if not getattr(options.cluster_backend(), "builds_images", True):
        return images_as_given(scenario, options)
    from chaos.backends.docker import api as docker_api
    from chaos.images import ensure_images
    from chaos.images import workload as workload_images
    from chaos.images.keras_probe import refuse_missing_keras

    versions = tuple(scenario.tf_versions())
    ensure_images(versions, proxy=options.our_proxy, progress=progress)
    client = docker_api.connect()
    if any(getattr(step.fault, "needs_netns_helper", False) for step in scenario.faults):
        from chaos.images.netns_helper import ensure_helper_image  # the packet faults' helper (chaos.netns)

        ensure_helper_image(client, progress=progress or (lambda _msg: None))
    if not options.our_proxy:
        docker_api.require_image(client, options.proxy_image)
    proxy = options.proxy_image or PROXY_IMAGE
    c = scenario.cluster
    workload = workload_of(scenario)
    others = {worker_image_tag(v): worker_image_tag(v) for v in versions}
    if workload is None:
        return Images(tuple(worker_image_tag(c.tf_version_of(i)) for i in range(c.containers)), proxy, others)
    image = workload_images.prepare(client, workload, progress)
    for step in scenario.faults:
        for other in step.fault.images():
            others[other] = workload_images.prepare_image(client, other, workload.agent == "auto", progress)
    refuse_missing_keras(client, scenario.name, image, keras_asked(workload.env, scenario))
    return Images((image,) * c.workers, proxy, others)


def keras_asked(env: dict[str, str], scenario: Scenario) -> set[str]:
    """The values of TF_USE_LEGACY_KERAS the scenario sets: the workload's env and its faults' (version_skew env)."""
    from chaos.images.keras_probe import VARIABLE

    envs = [env, *(getattr(step.fault, "env", None) or {} for step in scenario.faults)]
    return {e[VARIABLE] for e in envs if isinstance(e, dict) and VARIABLE in e}


def refuse_unsupported(scenario: Scenario, backend: str) -> None:
    """A scenario with more workers or a fault the backend cannot serve is refused before anything starts."""
    crowded = too_many_workers(scenario.cluster.workers, backend)
    if crowded:
        raise ScenarioError(
            f"{scenario.name}: {crowded}",
            hint=f"use at most {BACKEND_MAX_WORKERS[backend]} workers here, or run it on a swarm that spreads them over "
            f"its nodes (--backend swarm: up to {BACKEND_MAX_WORKERS['swarm']}; docs/backends.md)",
        )
    refused = refusal(scenario.name, [step.fault for step in scenario.faults], scenario.cluster.recovery.by, backend)
    if refused:
        raise refused


def images_as_given(scenario: Scenario, options: RunOptions) -> Images:
    """For a backend that builds nothing (a swarm): the project's tags, which must be on its engine
    already (the backend's cluster checks that and names a missing one)."""
    from chaos.images import PROXY_IMAGE, worker_image_tag

    if workload_of(scenario) is not None:
        raise ScenarioError(
            f"{scenario.name}: a workload (your job's image) runs on the {options.backend_name} backend only once "
            "its image, with the agent layered on, is on every node",
            hint="run it with --backend docker for now; the swarm backend runs the built-in harness",
        )
    c = scenario.cluster
    versions = tuple(scenario.tf_versions())
    others = {worker_image_tag(v): worker_image_tag(v) for v in versions}
    workers = tuple(worker_image_tag(c.tf_version_of(i)) for i in range(c.containers))
    return Images(workers, options.proxy_image or PROXY_IMAGE, others)


def run(
    scenario: Scenario,
    file: str,
    options: RunOptions = RunOptions(),
    *,
    events: EventLog | None = None,
    progress: Progress | None = None,
    admit: Callable[[], None] | None = None,
) -> Report:
    """Run one scenario end to end; see the module docstring.

    ``admit`` blocks until the scenario's turn (chaos.runner.suite): it is
    called once the cluster is prepared, before anything is measured.
    """
    events = events or EventLog()
    started = time.time()
    try:
        report = _run(scenario, file, options, events, progress, admit)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - anything broken is a result, never a missing scenario
        report = broken_report(scenario, file, exc, events, started, options)
    artifacts = write_artifacts(report, events, options.report_dir)
    return report.with_artifacts(artifacts) if artifacts else report


def _run(
    scenario: Scenario,
    file: str,
    options: RunOptions,
    events: EventLog,
    progress: Progress | None,
    admit: Callable[[], None] | None,
) -> Report:
    return run_cluster(
        scenario,
        file,
        deployment_of(scenario, prepare_images(scenario, options, progress)),
        options,
        events,
        progress,
        admit,
    )


def run_cluster(
    scenario: Scenario,
    file: str,
    spec: Deployment,
    options: RunOptions,
    events: EventLog,
    progress: Progress | None,
    admit: Callable[[], None] | None = None,
) -> Report:
    """Reference run if a check needs one, the cluster, the supervisor, the checks."""
    reference = None
    outcome = None
    backend = options.cluster_backend()
    with backend.cluster(spec, events=events) as cluster:
        # The cluster first: its standby workers import TensorFlow on idle CPU
        # while the scenario waits for its turn and the reference run (if not
        # cached) trains.
        if admit is not None:
            admit()
        if needs_reference(scenario) and Evidence.WEIGHTS in spec.launch.evidence:
            reference = uninterrupted_reference(spec, backend, progress, stop=events)
        supervisor = Supervisor(scenario, cluster, progress)
        try:
            outcome = supervisor.run()
        finally:
            supervisor.heal_all()
            cluster.record(PhaseEvent(t=time.time(), source=RUNNER, phase="teardown"))
    history = events.snapshot()
    timeline = Timeline.from_events(run_info(scenario, history, reference), history)
    verdicts = run_checks(scenario.checks, timeline)
    incomplete = None if outcome.finished else f"training did not complete: {outcome.reason}"
    return build_report(
        scenario,
        file,
        verdicts,
        timeline,
        incomplete=incomplete,
        proxy_image=options.proxy_image,
        backend=options.backend_name,
    )


def broken_report(
    scenario: Scenario, file: str, exc: Exception, events: EventLog, started: float, options: RunOptions
) -> Report:
    """The run itself broke: every check is unknown (not judged), the reason
    and the partial timeline are kept."""
    if isinstance(exc, ChaosError):
        reason = exc.message + (f" (hint: {exc.hint})" if exc.hint else "")
    else:  # a bug of ours: keep where it happened, briefly
        where = traceback.extract_tb(exc.__traceback__)[-1]
        reason = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})"
    history = [e for e in events.snapshot() if e.t >= started]
    timeline = Timeline.from_events(run_info(scenario, history), history)
    verdicts = [
        unknown("not judged: the run broke (see the run error)").about(c.name, c.role, c.params())
        for c in scenario.checks
    ]
    return build_report(
        scenario, file, verdicts, timeline, error=reason, proxy_image=options.proxy_image, backend=options.backend_name
    )


def write_artifacts(report: Report, events: EventLog, report_dir: Path | None) -> dict[str, str]:
    """Every per-scenario output under ``report_dir`` (chaos.report.outputs); never raises
    (a full disk is said in the report's artifacts, not a lost report)."""
    if report_dir is None:
        return {}
    try:
        return outputs.write_scenario(report, events.snapshot(), report_dir)
    except OSError as exc:
        return {"artifacts error": f"could not write under {report_dir}: {exc.strerror or exc}"}
