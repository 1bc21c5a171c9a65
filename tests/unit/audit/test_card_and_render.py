import json
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from audit_reports import (
    killed_worker_report,
    preempted_report,
    preempted_trained_to_end_report,
    reference_report,
    silent_report,
)

from chaos.audit.battery import KILLED_WORKER, PEER_PAUSED, PREEMPTION, REFERENCE
from chaos.audit.card import Assumptions, build_card
from chaos.audit.measure import measure, not_measured
from chaos.audit.render_html import page
from chaos.audit.render_text import markdown, to_json


def card(**kw):
    # The fault runs went side by side (-j 2): the step time and C are the reference's alone.
    runs = [
        measure(REFERENCE, reference_report(save_pause=0.3), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30, alone=False),
        measure(PEER_PAUSED, silent_report(10.0), 40, alone=False),
        not_measured(PREEMPTION, "refused for this workload: needs the harness"),
    ]
    return build_card(
        runs,
        Assumptions(24, 64),
        workload="the built-in harness",
        battery="quick",
        command="chaos audit --battery quick",
        **kw,
    )


def test_the_model_uses_the_measured_figures():
    m = card().model
    assert m.save_s.value == pytest.approx(0.3) and "uninterrupted run" in m.save_s.note
    assert m.step_time_s.value == pytest.approx(0.1)
    assert m.interval_steps == 10 and m.interval_s == pytest.approx(1.0)
    # R: median of 5.6 (killed worker) and 3.1 (paused: restart -> first step 3 + 0.1)
    assert m.restart_s.value == pytest.approx((5.6 + 3.1) / 2)
    assert m.mtbf_s == pytest.approx(1350)
    assert m.young_s == pytest.approx((2 * 0.3 * 1350) ** 0.5)
    assert m.best_interval_steps == round(m.daly_s / 0.1)
    assert 0 < m.now.ettr < m.recommended.ettr <= 1


def test_the_model_says_why_it_was_not_computed():
    runs = [not_measured(REFERENCE, "the run broke: Docker is down")]
    c = build_card(runs, Assumptions(24, 64), workload="w", battery="quick")
    assert c.model.now is None and "not computed" in c.model.missing
    assert "not computed" in markdown(c)


def test_not_measured_runs_stay_on_the_card_with_why():
    md = markdown(card())
    assert f"{PREEMPTION.title} | not measured | refused for this workload" in md
    assert "tau_Young = sqrt(2 C M)" in md and "ETTR now = tau/(tau + C)" in md


class Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.urls, self.open = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("href", "src") and v]
        if tag not in ("meta", "br", "link", "img", "input"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (tag, self.open[-3:])
        self.open.pop()


def test_html_card_parses_and_is_self_contained(tmp_path):
    c = card()
    runs = [
        replace(r, report=str(tmp_path / "runs" / "audit-killed-worker.html")) if r.key == "killed-worker" else r
        for r in c.runs
    ]
    html = page(replace(c, runs=runs), tmp_path)
    parser = Collector()
    parser.feed(html)
    parser.close()
    assert not parser.open
    assert "script" not in parser.tags and "link" not in parser.tags
    assert parser.urls == ["runs/audit-killed-worker.html"]  # the run's own page, relative: the folder can move
    assert "http://" not in html and "https://" not in html
    assert 'id="finding-hang"' in html and 'id="model"' in html and "tau_Daly" in html


def test_json_card_carries_every_figure_and_formula():
    data = json.loads(to_json(card()))
    assert data["grades"][-1]["area"] == "overall"
    assert data["model"]["formulas"]["young"] == "tau_Young = sqrt(2 C M)"
    assert data["model"]["save_s"]["value"] == pytest.approx(0.3)
    assert {r["key"] for r in data["runs"]} == {"reference", "killed-worker", "peer-paused", "preemption"}
    assert next(r for r in data["runs"] if r["key"] == "preemption")["status"] == "not measured"


def test_a_preempted_run_says_when_tf_noticed_the_sigterm_and_when_the_job_exited():
    runs = [measure(REFERENCE, reference_report(save_pause=0.3), 40), measure(PREEMPTION, preempted_report(0.7), 30)]
    md = markdown(build_card(runs, Assumptions(24, 64), workload="w", battery="quick", command="c"))
    assert "TF noticed the SIGTERM 0.70 s after it (it polls each 1 s), the job exited 1.70 s later" in md
    assert "TF noticed" not in markdown(card())  # no SIGTERM, no such words


def test_a_preemption_the_job_trained_through_to_the_end_feeds_no_detection_to_the_model():
    """Before, the exits after training ended (2.7-3.6 s) went into D as if they were detections."""
    runs = [
        measure(REFERENCE, reference_report(save_pause=0.3), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30),
        measure(PREEMPTION, preempted_trained_to_end_report(), 30),
    ]
    c = build_card(runs, Assumptions(24, 64), workload="w", battery="quick", command="c")
    assert c.model.detect_s.value == pytest.approx(0.2) and "preemption" not in c.model.detect_s.note
    hang = next(f for f in c.findings if f.id == "hang")
    assert hang.status == "ok" and hang.measured.startswith("1 of 1 failures noticed")


def test_a_preempted_job_that_trained_to_the_end_says_so_beside_when_tf_noticed_the_sigterm():
    runs = [
        measure(REFERENCE, reference_report(save_pause=0.3), 40),
        measure(PREEMPTION, preempted_trained_to_end_report(), 30),
    ]
    md = markdown(build_card(runs, Assumptions(24, 64), workload="w", battery="quick", command="c"))
    assert (
        "TF noticed the SIGTERM 0.60 s after it (it polls each 1 s), worker-1 trained to the end first "
        "(done, then exit 0): its exit was not its answer to the SIGTERM"
    ) in md
    assert "not measured later" not in md
