"""chaos compare end to end on real clusters: the default configuration against
a candidate whose heartbeat timeout is 30 s instead of 10 s, on a scenario whose
symptom waits for that timeout; and the default TF (2.21) against 2.18 on a shipped scenario
whose error TF 2.18 words differently (the whole suite: docs/compare.md). One run a side here (the suite's time budget):
the test checks the pipeline (interleaved real runs, reports on disk, the
comparison, its files and exit code) and that the figure moves the right way;
that four runs a side flag it as a regression is shown in docs/compare.md and
by the unit tests of the noise test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.cli import main

pytestmark = pytest.mark.integration

SCENARIOS = Path(__file__).parent / "compare_scenarios"
SHIPPED = Path(__file__).parents[2] / "scenarios"


def test_a_longer_heartbeat_timeout_shows_as_a_later_symptom(images, tmp_path, capsys):
    code = main(
        [
            "compare",
            "--baseline",
            "default",
            "--candidate",
            "heartbeat_timeout_s=30",
            str(SCENARIOS),
            "--repeat",
            "1",
            "--report-dir",
            str(tmp_path),
        ],
        embedded=True,
    )
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("run ")]
    assert [line.split(":")[0] for line in lines] == [
        "run 1/1 baseline (default)",
        "run 1/1 candidate (heartbeat_timeout_s=30)",
    ]
    assert code == 0, out  # one run a side cannot call a timing change, and both sides pass
    assert "no timing change can be called beyond noise" in out
    data = json.loads((tmp_path / "compare.json").read_text())
    (scenario,) = data["scenarios"]
    assert scenario["verdicts"] == {"baseline": {"pass": 1}, "candidate": {"pass": 1}}, out
    symptom = next(m for m in scenario["metrics"] if m["metric"] == "time_to_symptom_s")
    (before,), (after,) = symptom["baseline"], symptom["candidate"]
    # About one heartbeat timeout each (10 s, 30 s), run beside bin/test's other lanes:
    # a loaded machine adds seconds to the detection, alike on both sides.
    assert before < 16 and after > before + 12, out
    for side in ("baseline", "candidate"):
        assert (tmp_path / side / "run-1" / "paused-worker-until-heartbeat-timeout.json").exists()
    assert (tmp_path / "compare.md").exists() and (tmp_path / "compare-junit.xml").exists()


def test_tf_218_against_the_default_on_a_shipped_scenario_shows_the_versions_and_no_regression(
    images, tmp_path, capsys
):
    from chaos.images import ensure_images

    ensure_images(("2.18",), progress=lambda msg: print(f"[images] {msg}", flush=True))
    # TF 2.18 says "Task ... heartbeat timeout" where 2.20 says "stopped sending
    # heartbeats": before the scenario accepted both, this compare was a regression.
    code = main(
        [
            "compare",
            "--baseline",
            "default",
            "--candidate",
            "tf=2.18",
            str(SHIPPED / "partitioned-worker-fails-then-recovers.yaml"),
            "--repeat",
            "1",
            "--report-dir",
            str(tmp_path),
        ],
        embedded=True,
    )
    out = capsys.readouterr().out
    assert code == 0, out
    (scenario,) = json.loads((tmp_path / "compare.json").read_text())["scenarios"]
    assert scenario["verdicts"] == {"baseline": {"pass": 1}, "candidate": {"pass": 1}}, out
    before, after = scenario["environment_diff"]["tf_version"]
    assert before.startswith("2.21") and after.startswith("2.18"), scenario["environment_diff"]
    assert "environment: tf_version: 2.21" in out
