"""A real audit, recorded (tests/fixtures/audit_example: the run reports of one full battery
against the example's Keras fit job), measured and carded again with no container: its failure
policy, its validation and its goodput picture are the ones `chaos audit` printed for it."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from chaos.audit import goodput_svg, policy_yaml
from chaos.audit.battery import BATTERIES
from chaos.audit.card import Assumptions, build_card
from chaos.audit.measure import measure
from chaos.audit.policy import HANG, NO_RESTART, RECOVERED
from chaos.audit.render_text import markdown
from chaos.audit.run import with_policy_check
from chaos.report.model import Report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audit_example"
ENTRIES = {e.scenario["name"]: e for e in BATTERIES["full"]}


@pytest.fixture(scope="module")
def card():
    runs = []
    for entry in BATTERIES["full"]:
        path = FIXTURES / f"{entry.scenario['name']}.json.gz"
        if path.exists():  # the harness-only empty-checkpoint entry never ran for a user's job
            report = Report.from_dict(json.loads(gzip.decompress(path.read_bytes())))
            runs.append(measure(entry, report, entry.scenario["timeouts"]["symptom"]))
    assert len(runs) == 8
    target = policy_yaml.Target(name="audit-workload", workers=64)
    return with_policy_check(
        build_card(
            runs, Assumptions(24, 64), workload="examples/keras-mwms/audit-workload.yaml", battery="full", target=target
        )
    )


def test_the_recorded_runs_give_the_policy_the_audit_printed(card):
    p = card.policy
    assert p.retryable == (1, 137) and p.not_fixed == ()
    rows = {f.key: f for f in p.faults}
    for key in ("killed-worker", "killed-chief", "preemption"):
        assert rows[key].outcome == RECOVERED and rows[key].codes == (1, 137), rows[key]
    for key in ("partition", "peer-paused"):
        assert rows[key].outcome == RECOVERED and rows[key].codes == (1,), rows[key]
    assert rows["peer-blackholed"].outcome == HANG and rows["peer-blackholed"].codes == ()  # the watchdog's kills
    assert rows["blocked-at-bring-up"].outcome == NO_RESTART
    # The killed worker itself is the SIGKILL; its chief noticed and exited 1.
    killed = next(r for r in card.runs if r.key == "killed-worker")
    assert killed.exit_codes == {"worker-1": 137, "worker-0": 1}


def test_its_manifests_validate_and_the_card_prints_them(card):
    assert card.policy_check.endswith(": valid"), card.policy_check
    md = markdown(card)
    assert "| killed worker (SIGKILL worker-1) | crash | 1, 137 (SIGKILL) | - | recovered | retry |" in md
    assert "values: [1, 137]" in md and "kind: JobSet" in md
    assert "Fail the job (FailJob, FailJobSet): no exit code" in md


def test_its_goodput_curve_peaks_at_the_card_s_tau_daly(card):
    m = card.model
    c = goodput_svg.curve(m, samples=4000)
    C, R, D, M = m.save_s.value, m.restart_s.value, m.detect_s.value, m.mtbf_s
    # The card's formula peaks at sqrt(2C(M - D - R)) - C; tau_Daly, sqrt(2C(M + R)) - C, is
    # sqrt((M + R)/(M - D - R)) above it: 2.1 % on this job (M 1350 s, D + R 33 s) ...
    assert c.peak.tau_s == pytest.approx(math.sqrt(2 * C * (M - D - R)) - C, rel=0.002)
    assert m.daly_s / c.peak.tau_s == pytest.approx(math.sqrt((M + R) / (M - D - R)), rel=0.002)
    assert 1.02 < m.daly_s / c.peak.tau_s < 1.022
    # ... and it costs 0.0004 % of goodput against the top: the top is flat.
    assert 0 <= c.peak.ettr - goodput_svg.ettr_at(m, m.daly_s) < 1e-5
    assert c.peak.ettr - c.optimum.ettr < 1e-5
    assert c.now.tau_s < c.optimum.tau_s and c.now.ettr < c.optimum.ettr  # the job saves too often
    rows = {r.key: r for r in goodput_svg.downtime(card)}
    assert rows["peer-blackholed"].parts["detect"] > 40  # the hang: the stall watchdog's 40 s
