"""``chaos audit --battery quick`` on the built-in harness, end to end: real
Docker, real TF, the real proxy. The card's figures must be the runs' own:
each is recomputed here from the events of the run's JSON report (not through
chaos.audit.measure), and the model's inputs are those figures."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys

import pytest

from chaos.report.writers import read_json

pytestmark = pytest.mark.integration


def events(report, kind, source=None):
    return [e for e in report.timeline.events if e.kind == kind and (source is None or e.source == source)]


@pytest.fixture(scope="module")
def audited(tmp_path_factory, images):
    out = tmp_path_factory.mktemp("audit")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chaos",
            "audit",
            "--battery",
            "quick",
            "-j",
            "3",
            "--mtbf-hours",
            "24",
            "--nodes",
            "64",
            "--report-dir",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(proc.stdout[-6000:], proc.stderr[-3000:])
    return proc, out, json.loads((out / "card.json").read_text())


def test_the_card_is_written_and_the_exit_code_is_chaos_run_s(audited):
    proc, out, card = audited
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} >= {"card.html", "card.md", "card.json", "runs", "scenarios"}
    assert [r["key"] for r in card["runs"]] == ["reference", "killed-worker", "peer-paused"]
    assert all(r["status"] == "measured" for r in card["runs"]), [r["why"] for r in card["runs"]]
    html = (out / "card.html").read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert card["grades"][-1]["area"] == "overall" and "criteria met" in card["grades"][-1]["computation"]


def test_detection_and_recovery_figures_are_the_run_s_events(audited):
    _, out, card = audited
    run = next(r for r in card["runs"] if r["key"] == "killed-worker")
    report = read_json(out / "runs" / f"{run['scenario']}.json")
    inject = events(report, "inject")[0]
    first_restart = min(e.t for e in events(report, "restart") if e.t >= inject.t)
    for w in (0, 1):
        signs = [
            e.t
            for e in report.timeline.events
            if e.kind in ("error", "exit") and e.source == f"worker-{w}" and inject.t <= e.t < first_restart
        ]
        assert run["detection"][f"worker-{w}"]["value"] == pytest.approx(min(signs) - inject.t)
    exits = [e.t for e in events(report, "exit") if inject.t <= e.t <= first_restart]
    assert run["detect_s"]["value"] == pytest.approx(min(exits) - inject.t)
    last_restart = max(
        e.t for e in events(report, "restart") if e.t < min(s.t for s in events(report, "step") if s.t > first_restart)
    )
    first_step = min((s for s in events(report, "step") if s.t > last_restart), key=lambda s: s.t)
    assert run["restart_s"]["value"] == pytest.approx(first_step.t - first_restart)
    before = max(s.step for s in events(report, "step") if s.t < first_restart)
    restored = min(e.step for e in events(report, "restored") if e.t >= first_restart)
    assert run["steps_lost"]["value"] == before - restored
    assert run["verdicts"]["matches_uninterrupted"]["status"] == "pass"  # the harness resumes bit-exact


def test_the_model_is_fed_by_the_measured_figures(audited):
    _, out, card = audited
    m = card["model"]
    ref_run = next(r for r in card["runs"] if r["key"] == "reference")
    ref = read_json(out / "runs" / f"{ref_run['scenario']}.json")
    steps = [e for e in events(ref, "step", "worker-0")]
    gaps = {b.step: b.t - a.t for a, b in zip(steps, steps[1:]) if b.step == a.step + 1}
    median = statistics.median(gaps.values())
    assert m["step_time_s"]["value"] == pytest.approx(median)
    # C: each save is step N -> its checkpoint, or what it adds to step N's interval (the larger);
    # the card's is the mean over the saves of the runs that ran alone: with -j 3, the reference's.
    extras = []
    for c in events(ref, "checkpoint", "worker-0"):
        reported = [s.t for s in steps if s.step == c.step and s.t <= c.t]
        parts = [c.t - reported[-1]] if reported else []
        parts += [gaps[c.step] - median] if c.step in gaps else []
        if parts:
            extras.append(max(0.0, *parts))
    assert extras and m["save_s"]["value"] == pytest.approx(statistics.fmean(extras))
    failures = [r for r in card["runs"] if r["kind"] in ("crash", "silent")]
    assert m["restart_s"]["value"] == pytest.approx(statistics.median(r["restart_s"]["value"] for r in failures))
    assert m["detect_s"]["value"] == pytest.approx(statistics.median(r["detect_s"]["value"] for r in failures))
    assert m["mtbf_s"] == pytest.approx(24 * 3600 / 64)
    assert m["young_s"] == pytest.approx(math.sqrt(2 * m["save_s"]["value"] * m["mtbf_s"]))
    c, r, d, tau = m["save_s"]["value"], m["restart_s"]["value"], m["detect_s"]["value"], m["interval_s"]
    expected = tau / (tau + c) * (1 - (d + r + (tau + c) / 2) / m["mtbf_s"])
    assert m["now"]["ettr"] == pytest.approx(max(0.0, expected))
    assert m["recommended"]["ettr"] >= m["now"]["ettr"]


def _chromium():
    from browser import chromium  # conftest puts tests/integration on sys.path

    return chromium()


@pytest.mark.skipif(_chromium() is None, reason="needs Debian's chromium (bin/test installs it as root)")
def test_the_card_in_a_browser_shows_every_finding_and_requests_nothing_off_the_disk(audited):
    from browser import Browser

    _, out, card = audited
    with Browser(width=1280, height=1000) as browser:
        browser.open((out / "card.html").as_uri())
        rows = browser.evaluate("[...document.querySelectorAll('tr[id^=finding-]')].map(r => r.id)")
        text = browser.evaluate("document.body.innerText")
        assert rows == [f"finding-{f['id']}" for f in card["findings"]]
        assert all(f["title"] in text for f in card["findings"])
        assert card["grades"][-1]["computation"] in text and "tau_Daly" in text
        assert browser.script_errors() == []
        assert [u for u in browser.requests() if not u.startswith("file://")] == []
