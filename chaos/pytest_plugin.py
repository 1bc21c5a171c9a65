"""pytest plugin: scenario files as test items, and cluster fixtures.

Scenarios start Docker clusters, so they are collected only when asked for::

    pytest --chaos-scenarios scenarios/            # every scenario file is a test item
    pytest --chaos-scenarios scenarios/killed-worker-recovers-from-checkpoint.yaml

A plain ``pytest tests/`` never starts a cluster by surprise. A failing item
shows the verdict summary (each failing verdict's evidence and the command that
reproduces it), not a traceback.

Fixtures: ``chaos_images`` (builds or reuses the images; returns their tags)
and ``chaos_cluster`` (a started 2-worker cluster behind the proxy, torn down
after the test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

SCENARIO_SUFFIXES = {".yaml", ".yml"}


def pytest_addoption(parser):
    group = parser.getgroup("tfchaos")
    group.addoption(
        "--chaos-scenarios",
        action="store_true",
        default=False,
        help="collect scenario files (*.yaml under a scenarios/ folder) as test items; they start Docker clusters",
    )
    group.addoption("--chaos-report-dir", metavar="DIR", default=None, help="write scenario reports here")
    group.addoption(
        "--chaos-proxy-image",
        metavar="IMAGE",
        default=None,
        help="run the proxy from this Toxiproxy-API server image instead of ours (must exist locally and "
        "serve the API on 0.0.0.0:8474 with its default command)",
    )


def pytest_collect_file(file_path: Path, parent):
    if not parent.config.getoption("chaos_scenarios"):
        return None
    if file_path.suffix in SCENARIO_SUFFIXES and file_path.parent.name == "scenarios":
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFailed(Exception):
    def __init__(self, report) -> None:
        super().__init__(report.scenario)
        self.report = report


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.stem)


def _proxy_image(config) -> str:
    """``--chaos-proxy-image``, or our proxy image."""
    from chaos.images import PROXY_IMAGE

    return config.getoption("chaos_proxy_image") or PROXY_IMAGE


def _images(config, versions: tuple[str, ...]) -> dict[str, str]:
    """Worker image tags; builds what is missing, and our proxy image unless
    ``--chaos-proxy-image`` names another (which is only required to exist)."""
    from chaos.images import PROXY_IMAGE, ensure_images, worker_image_tag

    built = config.stash.setdefault(_BUILT, set())
    missing = tuple(v for v in versions if v not in built)
    if missing:
        ensure_images(missing, proxy=_proxy_image(config) == PROXY_IMAGE)
        built.update(missing)
    return {v: worker_image_tag(v) for v in versions}


_BUILT = pytest.StashKey[set]()


class ScenarioItem(pytest.Item):
    def runtest(self) -> None:
        from dataclasses import replace

        from chaos.checks.verdict import Status
        from chaos.images import PROXY_IMAGE
        from chaos.report import write_json
        from chaos.runner.run import run_scenario
        from chaos.scenario.loader import load_scenario

        scenario = load_scenario(self.path)
        versions = tuple(scenario.tf_versions())
        images = _images(self.config, versions)
        report_dir = self.config.getoption("chaos_report_dir")
        proxy_image = _proxy_image(self.config)
        report = run_scenario(
            scenario,
            str(self.path.relative_to(self.config.rootpath)) if self.path.is_relative_to(self.config.rootpath) else str(self.path),
            images=images,
            proxy_image=proxy_image,
            report_dir=Path(report_dir) if report_dir else None,
        )
        if proxy_image != PROXY_IMAGE:
            report = replace(report, proxy_image=proxy_image)  # in the reproduce command
        if report_dir:
            write_json(report, Path(report_dir) / f"{scenario.name}.json")
        for label, verdict in report.numbered():
            self.user_properties.append((label, f"{verdict.status.value}: {verdict.reason}"))
        if report.status != Status.PASS:
            raise ScenarioFailed(report)

    def repr_failure(self, excinfo, style=None):
        from chaos.errors import ChaosError
        from chaos.report import terminal_summary

        if isinstance(excinfo.value, ScenarioFailed):
            return terminal_summary([excinfo.value.report])
        if isinstance(excinfo.value, ChaosError):
            return excinfo.value.render()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"scenario {self.name}"


@pytest.fixture(scope="session")
def chaos_images(pytestconfig) -> dict[str, str]:
    """Tags of the default worker image and the proxy image (built if missing or
    stale; ``--chaos-proxy-image`` replaces ours)."""
    images = _images(pytestconfig, ("2.20",))
    return {"worker": images["2.20"], "proxy": _proxy_image(pytestconfig)}


@pytest.fixture
def chaos_cluster(chaos_images):
    """A started 2-worker cluster behind the proxy; torn down after the test."""
    from chaos.cluster.docker_cluster import ClusterSpec, DockerCluster

    spec = ClusterSpec(images=(chaos_images["worker"],) * 2, proxy_image=chaos_images["proxy"])
    with DockerCluster(spec) as cluster:
        cluster.start_workers()
        yield cluster
