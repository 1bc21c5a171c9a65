"""What every command that runs a suite does first (``chaos run``, ``compare``,
``matrix``, ``audit``): the scenario files validated at once into suite entries,
and the engine asked once whether it answers."""

from __future__ import annotations

from pathlib import Path

from chaos import resources
from chaos.backends.catalog import DEFAULT_BACKEND, backend_class, check_backend
from chaos.errors import ScenarioError
from chaos.runner.run import RunOptions, refuse_unsupported
from chaos.runner.suite import SuiteEntry
from chaos.scenario.loader import load_many

SUITE_DIR = resources.builtin_scenarios_dir()
DEFAULT_JOBS = 3  # measured: see README, "the scenario suite"


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_entries(paths: list[str], workload_file: str | None = None) -> list[SuiteEntry]:
    """Every file validated before anything starts; every problem reported at once
    (no path: the suite that ships with tfchaos). ``workload_file``: run every
    scenario against that workload (each scenario is validated against it)."""
    loaded = load_many(paths or [SUITE_DIR])
    if workload_file is not None and loaded.scenarios:
        from chaos.scenario.workload_file import load_workload

        workload = load_workload(workload_file)
        scenarios = []
        for scenario in loaded.scenarios:
            try:
                scenarios.append(scenario.with_workload(workload))
            except ScenarioError as exc:
                loaded.errors.append(
                    ScenarioError(f"{scenario.source} with --workload {workload_file}: {exc.message}", hint=exc.hint)
                )
        loaded = loaded._replace(scenarios=scenarios)
    if loaded.errors:
        if len(loaded.errors) == 1:
            raise loaded.errors[0]
        total = len(loaded.errors) + len(loaded.scenarios)
        raise ScenarioError(
            f"{len(loaded.errors)} of {total} scenario files are invalid; nothing was run:\n"
            + "\n".join(e.render() for e in loaded.errors),
            hint="`chaos validate FILE` checks one file",
        )
    return [SuiteEntry(s, display_path(Path(s.source))) for s in loaded.scenarios]


def backend_named(name: str):
    """The backend ``--backend NAME`` names (None: the default, one Docker host)."""
    if check_backend(name) == DEFAULT_BACKEND:
        return None
    return backend_class(name)()


def refuse_for_backend(entries: list[SuiteEntry], backend: str) -> None:
    """Every scenario whose faults need an ability ``backend`` lacks, at once (nothing was run)."""
    errors, hints = [], []
    for entry in entries:
        try:
            refuse_unsupported(entry.scenario, backend)
        except ScenarioError as exc:
            errors.append(f"{entry.file}: {exc.message}")
            if exc.hint and exc.hint not in hints:
                hints.append(exc.hint)
    if errors:
        raise ScenarioError(
            f"{len(errors)} of {len(entries)} scenarios cannot run on the {backend} backend; "
            "nothing was run:\n  " + "\n  ".join(errors),
            hint="leave them out, or " + "; or ".join(hints),
        )


def preflight(options: RunOptions) -> None:
    """Once, not per scenario: the engine answers, a user's proxy image exists."""
    options.cluster_backend().check(None if options.our_proxy else options.proxy_image)
