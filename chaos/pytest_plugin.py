"""pytest plugin: scenario files as test items, and cluster fixtures.

Scenarios start Docker clusters, so they are collected only when asked for::

    pytest --chaos-scenarios                     # *.yaml in folders named scenarios/ among the test paths
    pytest --chaos-scenarios=chaos_suite         # every scenario file under chaos_suite/, whatever its name
    pytest --chaos-scenarios=chaos_suite --chaos-jobs 2

A plain ``pytest tests/`` never starts a cluster by surprise. A path given to
``--chaos-scenarios`` that holds no scenario file is a usage error, not an
empty run.

Scenario items are run by the same suite runner as ``chaos run``
(chaos.runner.suite): when the first scenario item runs, every selected
scenario is started in the background, several at once (``--chaos-jobs``;
timing-sensitive ones alone), and each item reports its own scenario's
result as it comes. The suite runs in a process forked from pytest's before
any test ran (chaos.runner.forked_suite), so what a test patches while it runs
(environment, module attributes) never reaches a scenario. A failing item shows the verdict summary (each failing
verdict's evidence and the command that reproduces it), not a traceback; a
scenario whose run broke fails with the reason.

Tests marked ``chaos_beside_scenarios`` run first, and the scenarios start
beside them as soon as collection ends; the timing-sensitive scenarios wait
until those tests are done. Such a test times nothing that a loaded machine
breaks (unit tests; integration tests judged on events, digests, error
classes); what it starts on the engine is its own (the scenarios run in a
session of their own, so a test's cleanup of its session never meets them),
and it never cleans what is not (``chaos clean --all``). The other tests run after the scenarios, on a machine of their
own. Without such marked tests the scenarios start with the first scenario item.

After a scenario passed, its item also checks that the run's own worker logs
diagnose as that scenario (``chaos diagnose``; the rule is in
chaos.diagnose.selfcheck, the catalogue is every scenario file in the selected
scenarios' folders). ``--chaos-diagnose warn`` (the default) reports a mismatch
as a warning and a JUnit property, ``strict`` fails the item, ``off`` skips it.

Fixtures: ``chaos_images`` (builds or reuses the images; returns their tags)
and ``chaos_cluster`` (a started 2-worker cluster behind the proxy, torn down
after the test).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

SCENARIO_SUFFIXES = {".yaml", ".yml"}
DEFAULT_FOLDER = "scenarios"
BESIDE = "chaos_beside_scenarios"

_SUITE = pytest.StashKey[object]()
_ROOTS = pytest.StashKey[list]()
_CATALOGUE = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("tfchaos")
    group.addoption(
        "--chaos-scenarios",
        action="append",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="collect scenario files as test items (they start Docker clusters): with no PATH, *.yaml in "
        "folders named scenarios/; with PATH (repeatable), every scenario file under it",
    )
    group.addoption("--chaos-report-dir", metavar="DIR", default=None, help="write scenario reports here")
    group.addoption(
        "--chaos-jobs",
        type=int,
        default=int(os.environ.get("TFCHAOS_JOBS", "3")),
        metavar="N",
        help="run up to N scenarios at once (timing-sensitive ones always alone; default 3)",
    )
    group.addoption(
        "--chaos-diagnose",
        choices=("warn", "strict", "off"),
        default="warn",
        help="check that each passing scenario's worker logs diagnose as that scenario (chaos diagnose): "
        "warn (default: a mismatch is a warning in the summary and a JUnit property), strict (a mismatch "
        "fails the item), off",
    )
    group.addoption(
        "--chaos-proxy-image",
        metavar="IMAGE",
        default=None,
        help="run the proxy from this Toxiproxy-API server image instead of ours (must exist locally and "
        "serve the API on 0.0.0.0:8474 with its default command)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{BESIDE}: may run while scenarios run (times nothing a loaded machine breaks, removes nothing "
        "but its own objects); "
        "with --chaos-scenarios such tests run first and the scenarios start beside them",
    )
    given = config.getoption("chaos_scenarios")
    if given is None:
        return
    roots = []
    for text in (g for g in given if g):
        path = Path(text)
        if not path.exists():
            raise pytest.UsageError(f"--chaos-scenarios {text}: no such file or folder")
        if path.is_dir() and not any(p.suffix in SCENARIO_SUFFIXES for p in path.rglob("*")):
            raise pytest.UsageError(
                f"--chaos-scenarios {text}: holds no scenario file (*.yaml, *.yml); "
                "give the folder that holds your scenarios"
            )
        roots.append(path.resolve())
        if text not in config.args:
            config.args.append(text)  # collect it even when other paths were given
    config.stash[_ROOTS] = roots


def pytest_collect_file(file_path: Path, parent):
    config = parent.config
    if config.getoption("chaos_scenarios") is None or file_path.suffix not in SCENARIO_SUFFIXES:
        return None
    roots = config.stash.get(_ROOTS, [])
    under_root = any(file_path == r or r in file_path.parents for r in roots)
    if under_root or file_path.parent.name == DEFAULT_FOLDER:
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class SelfDiagnosisFailed(Exception):
    """The scenario passed, but its own worker logs do not diagnose as it."""


class SelfDiagnosisWarning(UserWarning):
    """The same, reported without failing the item (``--chaos-diagnose warn``, the
    default): diagnose's slowdown signature still matches step-time noise of a
    loaded machine (measured: 1 of 6 runs of a kill scenario run beside others
    ranked a straggler scenario first), so a mismatch is not yet proof of a bug."""


def _catalogue(item):
    """The `chaos diagnose` catalogue of the session: every scenario file in the
    folders of the selected scenarios, built once."""
    entries = item.config.stash.get(_CATALOGUE, None)
    if entries is None:
        from chaos.diagnose import build

        folders = sorted({i.path.parent for i in item.session.items if isinstance(i, ScenarioItem)})
        entries, _ = build(folders, None)
        item.config.stash[_CATALOGUE] = entries
    return entries


def _self_diagnosis(item, report) -> None:
    """Each run's worker logs must diagnose as its scenario (rule: chaos.diagnose.selfcheck)."""
    from chaos.checks.verdict import Status
    from chaos.diagnose.attribution_check import judge
    from chaos.diagnose.selfcheck import report_logs, verdict

    # Only the timing-sensitive scenarios run alone; the others' step times carry their neighbours' load.
    shared = not any(check.timing_sensitive for check in item.scenario.checks)
    logs = report_logs(report)
    diagnosed, _ = verdict(report.scenario, logs, _catalogue(item), shared_cores=shared)
    # Root, cascade, teardown, retry outlook, restart loop (rule: chaos.diagnose.attribution_check).
    attributed = judge(report, logs)
    item.user_properties += [(v.check, v.reason) for v in (diagnosed, attributed)]
    misses = [v.reason for v in (diagnosed, attributed) if v.status is Status.FAIL]
    if misses:
        where = report.artifacts.get("worker-0 log")
        command = (
            f"chaos diagnose {Path(where).parent}"
            if where
            else "rerun with --chaos-report-dir DIR, then chaos diagnose DIR/" + report.scenario
        )
        raise SelfDiagnosisFailed(
            f"{report.scenario} passed, but {'; and '.join(misses)}\nsee: {command} (docs/diagnose.md)"
        )


class ScenarioFailed(Exception):
    def __init__(self, report) -> None:
        super().__init__(report.scenario)
        self.report = report


class ScenarioFile(pytest.File):
    def collect(self):
        from chaos.errors import ChaosError
        from chaos.scenario.loader import load_scenario

        try:
            scenario = load_scenario(self.path)
        except ChaosError as exc:
            yield InvalidScenarioItem.from_parent(self, name=self.path.stem, error=exc)
            return
        yield ScenarioItem.from_parent(self, name=self.path.stem, scenario=scenario)


class InvalidScenarioItem(pytest.Item):
    """A scenario file that does not validate: fails with its ChaosError."""

    def __init__(self, *, error, **kwargs) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo, style=None):
        return self.error.render()

    def reportinfo(self):
        return self.path, 0, f"scenario file {self.name}"


def _options(config):
    from chaos.runner.run import RunOptions

    report_dir = config.getoption("chaos_report_dir")
    return RunOptions(
        proxy_image=config.getoption("chaos_proxy_image"),
        report_dir=Path(report_dir) if report_dir else None,
    )


def _display(config, path: Path) -> str:
    return str(path.relative_to(config.rootpath)) if path.is_relative_to(config.rootpath) else str(path)


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(session, config, items):
    """The tests that may run beside the scenarios first, the scenarios next, the rest after."""
    scenarios = [i for i in items if isinstance(i, ScenarioItem)]
    beside = [i for i in items if not isinstance(i, ScenarioItem) and i.get_closest_marker(BESIDE)]
    if scenarios and beside:
        placed = {id(i) for i in scenarios + beside}
        items[:] = beside + scenarios + [i for i in items if id(i) not in placed]


def pytest_collection_finish(session):
    """Start the scenarios now when tests that may run beside them come first."""
    items = session.items
    if session.config.option.collectonly or not items or isinstance(items[0], ScenarioItem):
        return
    if items[0].get_closest_marker(BESIDE) and any(isinstance(i, ScenarioItem) for i in items):
        _start_suite(session, hold_exclusive=True)


def _start_suite(session, *, hold_exclusive: bool = False):
    from chaos.runner.forked_suite import ForkedSuite
    from chaos.runner.suite import SuiteEntry

    config = session.config
    items = [i for i in session.items if isinstance(i, ScenarioItem)]
    entries = [SuiteEntry(i.scenario, _display(config, i.path)) for i in items]
    for index, i in enumerate(items):
        i.index = index
    suite = ForkedSuite(
        entries, _options(config), jobs=config.getoption("chaos_jobs"), hold_exclusive=hold_exclusive
    ).start()
    config.stash[_SUITE] = suite
    return suite


def _suite(item):
    """The session's suite of every selected scenario, started on first use (or
    early, beside the tests before it: those are done once a scenario item runs)."""
    suite = item.config.stash.get(_SUITE, None)
    if suite is None:
        return _start_suite(item.session)
    suite.release_exclusive()
    return suite


def pytest_sessionfinish(session):
    """-x, Ctrl-C or an error elsewhere: stop the scenarios still running, tear them down."""
    suite = session.config.stash.get(_SUITE, None)
    if suite is not None:
        suite.cancel()


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.index = -1
        # pytest-timeout would count the time this item waits for its turn behind the
        # other scenarios (exclusive ones run last); its limit bounds the scenario's
        # own run instead, from the scenario's start (Suite.result).
        self.limit_s = None
        if self.config.pluginmanager.hasplugin("timeout"):
            self.limit_s = float(self.config.getini("timeout") or 0) or None
            self.add_marker(pytest.mark.timeout(0))

    def runtest(self) -> None:
        from chaos.checks.verdict import Status

        report = _suite(self).result(self.index, limit_s=self.limit_s)
        for label, verdict in report.numbered():
            self.user_properties.append((label, f"{verdict.status.value}: {verdict.reason}"))
        if report.status != Status.PASS:
            raise ScenarioFailed(report)
        mode = self.config.getoption("chaos_diagnose")
        if mode != "off":
            try:
                _self_diagnosis(self, report)
            except SelfDiagnosisFailed as mismatch:
                if mode == "strict":
                    raise
                warnings.warn(SelfDiagnosisWarning(str(mismatch)), stacklevel=1)

    def repr_failure(self, excinfo, style=None):
        from chaos.errors import ChaosError
        from chaos.report import terminal_summary
        from chaos.runner.forked_suite import SuiteProcessEnded
        from chaos.runner.suite import ScenarioOverran

        if isinstance(excinfo.value, (SelfDiagnosisFailed, ScenarioOverran, SuiteProcessEnded)):
            return str(excinfo.value)
        if isinstance(excinfo.value, ScenarioFailed):
            return terminal_summary([excinfo.value.report])
        if isinstance(excinfo.value, ChaosError):
            return excinfo.value.render()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"scenario {self.name}"


def _proxy_image(config) -> str:
    from chaos.images import PROXY_IMAGE

    return config.getoption("chaos_proxy_image") or PROXY_IMAGE


@pytest.fixture(scope="session")
def chaos_images(pytestconfig) -> dict[str, str]:
    """Tags of the default worker image and the proxy image (built if missing or
    stale; ``--chaos-proxy-image`` replaces ours, which is then not built)."""
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag
    from chaos.images.versions import DEFAULT_TF_VERSION

    proxy = _proxy_image(pytestconfig)
    ensure_images((DEFAULT_TF_VERSION,), proxy=proxy == PROXY_IMAGE)
    return {"worker": worker_image_tag(DEFAULT_TF_VERSION), "proxy": proxy}


@pytest.fixture
def chaos_cluster(chaos_images):
    """A started 2-worker cluster behind the proxy; torn down after the test."""
    from chaos.backends.docker.backend import DockerBackend
    from chaos.backends.spec import Deployment

    spec = Deployment(images=(chaos_images["worker"],) * 2, proxy_image=chaos_images["proxy"])
    with DockerBackend().cluster(spec) as cluster:
        cluster.start_workers()
        yield cluster
