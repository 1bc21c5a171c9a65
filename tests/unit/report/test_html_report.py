"""The HTML report from hand-built reports: every fault window, mark and
verdict is on the page; a broken run is an error row of the index; bad or
missing data gives a page that says so, never a crash."""

import math
import re
from dataclasses import replace
from pathlib import Path

from chaos.checks import run_checks
from chaos.eventlog import EventLog
from chaos.events import (
    RUNNER,
    CheckpointEvent,
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    HealEvent,
    InjectEvent,
    LogLine,
    PhaseEvent,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.report import build_report
from chaos.report.html_index import index_page, write_index
from chaos.report.html_page import scenario_page, write_page, write_page_artifact
from chaos.report.marks import picture
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import Timeline

UNAVAILABLE = "tensorflow.python.framework.errors_impl.UnavailableError"
NAME = "latency-then-killed-worker"


def scenario():
    return scenario_from_dict(
        {
            "name": NAME,
            "description": "slow the chief's link, then kill worker-1",
            "explain": {"symptom": "steps slow, then UnavailableError", "cause": "no elasticity", "fix": "restart all"},
            "cluster": {"training": {"epochs": 4, "steps_per_epoch": 10}},
            "faults": [
                {"latency": {"worker": 0, "latency_ms": 800}, "at": {"step": 5}, "for": 3},
                {"kill_worker": {"worker": 1}, "at": {"step": 15}},
            ],
            "expect": [{"error": {"class": "UnavailableError", "workers": [0]}}],
            "recover": [{"completed": {}}, {"matches_uninterrupted": {}}],
        }
    )


def steps(t, first, last, dt, workers=(0, 1)):
    out = []
    for step in range(first, last + 1):
        t += dt(step) if callable(dt) else dt
        out += [StepEvent(t=t, source=f"worker-{w}", step=step, loss=1.0 / step) for w in workers]
    return out, t


def events():
    ev = [PhaseEvent(t=100.0, source=RUNNER, phase="bring_up")]
    ev += [StartEvent(t=104.0, source=f"worker-{w}", tf_version="2.20") for w in (0, 1)]
    more, t = steps(105.0, 1, 15, lambda s: 1.2 if 6 <= s <= 8 else 0.2)
    ev += more
    ev += [
        InjectEvent(t=105.9, source=RUNNER, fault="latency", target="worker-0", params={"ms": 800}),
        HealEvent(t=109.5, source=RUNNER, fault="latency", target="worker-0"),
        CheckpointEvent(t=108.0, source="worker-0", step=10, path="/backup/chief/ckpt-1"),
        InjectEvent(t=t + 0.1, source=RUNNER, fault="kill_worker", target="worker-1"),
        ExitEvent(t=t + 0.2, source="worker-1", exit_code=137, oom_killed=True),
        ErrorEvent(t=t + 2.0, source="worker-0", error_class=UNAVAILABLE, message="Collective ops is aborted"),
        ExitEvent(t=t + 2.1, source="worker-0", exit_code=1),
        RestartEvent(t=t + 3.0, source="worker-0", reason="restart all"),
        RestartEvent(t=t + 3.0, source="worker-1", reason="restart all"),
    ]
    t += 6.0
    ev += [
        RestoredEvent(t=t, source=f"worker-{w}", step=10, epoch=1, checkpoint="/backup/chief/ckpt-1") for w in (0, 1)
    ]
    more, t = steps(t, 11, 40, 0.2)
    ev += more
    ev += [DoneEvent(t=t + 0.1, source=f"worker-{w}", step=40, weights_digest="abc") for w in (0, 1)]
    return ev


def make_report(ev=None, **kw):
    s = scenario()
    t = Timeline(s.run_info(reference_digest="abc", reference_final_loss=0.025), events() if ev is None else ev)
    return build_report(s, f"scenarios/{NAME}.yaml", run_checks(s.checks, t), t, **kw)


def svg_ids(html):
    return set(re.findall(r'<g id="([^"]+)"', html))


def test_every_fault_window_is_shaded_on_every_lane_labelled_and_listed():
    html = scenario_page(make_report())
    ids = svg_ids(html)
    for index, label in ((0, "0: latency on worker-0"), (1, "1: kill_worker on worker-1")):
        assert {f"fault-{index}-w0", f"fault-{index}-w1", f"fault-{index}-steptime", f"fault-label-{index}"} <= ids
        assert html.count(label) >= 2  # in the picture and in the table
    assert len(re.findall(r'<tr class="fault-window">', html)) == 2


def test_every_mark_is_drawn_and_listed():
    report = make_report()
    pic = picture(report)
    kinds = {m.kind for m in pic.marks}
    assert kinds == {
        "error",
        "exit",
        "oom_kill",
        "restart",
        "restored",
        "resumed",
        "checkpoint_used",
        "done",
        "slow_step",
    }
    html = scenario_page(report)
    ids = svg_ids(html)
    for kind in kinds:
        assert any(i.startswith(f"mark-{kind}-") for i in ids), kind
    assert len(re.findall(r'<tr class="mark ', html)) == len(pic.marks)
    assert len([i for i in ids if i.startswith("mark-")]) == len(pic.marks)
    assert "OOM kill (exit 137)" in html and "restored ckpt-1 (epoch 1, step 10)" in html
    assert "resumed at step 11" in html and "UnavailableError" in html


def test_marks_sit_at_the_step_of_their_worker_when_they_happened():
    pic = picture(make_report())
    by_kind = {(m.kind, m.worker): m for m in pic.marks}
    assert by_kind[("oom_kill", 1)].step == 15
    assert by_kind[("restored", 0)].step == 10 and by_kind[("resumed", 0)].step == 11
    slow = by_kind[("slow_step", 0)]
    assert slow.step == 6 and slow.label.startswith("3 slow steps")  # the latency window, one mark


def test_a_lane_breaks_at_a_restart_and_the_reference_is_drawn():
    pic = picture(make_report())
    assert [s for _, s in pic.lanes[1].steps].count(None) == 1  # one break: the restart (start events come first)
    assert pic.pace[0][1] == 1 and pic.pace[-1][1] == 40
    html = scenario_page(make_report())
    assert {"pace-w0", "reference-loss-w0", "steps-w0", "loss-w1", "median-step-time"} <= svg_ids(html)


def test_the_reference_runs_own_curve_replaces_the_pace_when_it_was_run():
    s = scenario()
    curve = ((0.0, 1, 1.5), (2.0, 20, 0.5), (4.5, 40, 0.03))
    info = s.run_info(reference_digest="abc", reference_final_loss=0.025, reference_curve=curve)
    report = build_report(
        s, f"scenarios/{NAME}.yaml", run_checks(s.checks, Timeline(info, events())), Timeline(info, events())
    )
    pic = picture(report)
    first = min(t for lane in pic.lanes for t, st in lane.steps[:1] if st is not None)
    assert pic.reference == [(first, 1.0), (first + 2.0, 20.0), (first + 4.5, 40.0)] and pic.pace == []
    ids = svg_ids(scenario_page(report))
    assert "reference-w0" in ids and "reference-w1" in ids and not any(i.startswith("pace-") for i in ids)
    assert "uninterrupted reference run" in scenario_page(report)


def test_the_reference_curve_is_worker_0s_steps_thinned_with_the_last_kept():
    from chaos.events import StepEvent
    from chaos.runner.reference import progress_curve

    steps = [
        StepEvent(t=100.0 + i * 0.1, source=f"worker-{w}", step=i, epoch=0, loss=1.0 / i)
        for i in range(1, 1001)
        for w in (0, 1)
    ]
    curve = progress_curve(steps, points=240)
    assert len(curve) <= 241 and curve[0] == (0.0, 1, 1.0) and curve[-1][1] == 1000
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(curve, curve[1:]))
    assert progress_curve([]) == ()


def test_every_verdict_reason_explanation_and_reproduce_command_is_on_the_page():
    report = make_report()
    html = scenario_page(report)
    assert len(re.findall(r'<tr class="verdict">', html)) == len(report.verdicts) == 3
    for label, verdict in report.numbered():
        assert label in html and verdict.reason.replace("'", "&#x27;") in html
    for text in (
        "steps slow, then UnavailableError",
        "no elasticity",
        "restart all",
        f"chaos run scenarios/{NAME}.yaml",
    ):
        assert text in html
    assert f"status s-{report.status.value}" in html


def test_worker_logs_are_relative_links(tmp_path):
    logs = tmp_path / NAME
    logs.mkdir()
    (logs / "worker-0.log").write_text("hello\n")
    report = make_report(artifacts={"worker-0 log": str(logs / "worker-0.log")})
    page = write_page(report, tmp_path)
    assert f'href="{NAME}/worker-0.log"' in page.read_text()


def test_the_page_needs_no_network_and_no_script():
    html = scenario_page(make_report())
    assert "<script" not in html.lower() and "<metadata" not in html
    assert not re.search(r'(src|href)="(https?:)?//|url\((?!#)|@import', html)


def test_text_from_the_run_is_escaped():
    report = make_report()
    report = replace(report, error="<script>alert(1)</script>")
    html = scenario_page(report)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_run_that_broke_before_training_has_a_page_that_says_so_and_an_error_row():
    s = scenario()
    broken = build_report(
        s, f"scenarios/{NAME}.yaml", [], Timeline(s.run_info(), []), error="image tfchaos/worker:tf2.20 is missing"
    )
    html = scenario_page(broken)
    assert 'id="no-figure"' in html and "nothing to draw" in html
    assert "image tfchaos/worker:tf2.20 is missing" in html and "no check ran" in html
    index = index_page([make_report(), broken])
    rows = re.findall(r'<tr class="scenario row-(\w+)"', index)
    assert rows == [make_report().status.value, "error"]
    assert "run error: image tfchaos/worker:tf2.20 is missing" in index
    assert "2 scenarios:" in index and "1 error" in index


def test_the_index_links_pages_that_exist_and_says_which_are_missing(tmp_path):
    report = make_report()
    other = replace(report, scenario="never-written")
    write_page(report, tmp_path)
    index = write_index([report, other], tmp_path).read_text()
    assert f'<a href="{NAME}.html">' in index
    assert "never-written <span" in index and "(no page written)" in index


def test_bad_data_is_drawn_around_not_crashed_on():
    ev = events()
    ev = [replace(e, loss=math.nan) if isinstance(e, StepEvent) and e.step == 3 else e for e in ev]
    ev.append(StepEvent(t=110.0, source="worker-5", step=7, loss=math.inf))  # a worker the run info does not know
    ev.append(LogLine(t=111.0, source="worker-0", text="just a log line"))
    pic = picture(make_report(ev))
    assert [lane.worker for lane in pic.lanes] == [0, 1, 5]
    assert all(math.isfinite(v) for lane in pic.lanes for _, v in lane.losses if v is not None)
    assert "fault-0-w5" in svg_ids(scenario_page(make_report(ev)))


def test_faults_without_steps_still_draw_the_windows():
    ev = [
        PhaseEvent(t=1.0, source=RUNNER, phase="bring_up"),
        InjectEvent(t=2.0, source=RUNNER, fault="latency", target="worker-0"),
    ]
    html = scenario_page(make_report(ev))
    assert "fault-0-w0" in svg_ids(html) and "(never healed)" in html


def test_a_drawing_bug_costs_the_picture_not_the_page(monkeypatch):
    import chaos.report.html_page as page

    def broken(_):
        raise RuntimeError("no fonts")

    monkeypatch.setattr(page, "timeline_svg", broken)
    html = scenario_page(make_report())
    assert "the picture could not be drawn: RuntimeError: no fonts" in html
    assert len(re.findall(r'<tr class="fault-window">', html)) == 2  # the table is still there


def test_a_page_that_cannot_be_written_is_an_artifact_error_not_a_lost_report(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = write_page_artifact(make_report(), blocker)
    assert list(out) == ["page error"] and str(blocker) in out["page error"]
    assert write_page_artifact(make_report(), tmp_path) == {"page": str(tmp_path / f"{NAME}.html")}


def test_the_runner_writes_the_page_beside_the_json(tmp_path):
    from chaos.report import read_json
    from chaos.runner.run import write_artifacts

    log = EventLog()
    for e in events():
        if e.source != RUNNER:
            log.append(e)
    report = make_report()
    artifacts = write_artifacts(report, log, tmp_path)
    assert Path(artifacts["page"]) == tmp_path / f"{NAME}.html"
    html = (tmp_path / f"{NAME}.html").read_text()
    assert f'href="{NAME}/worker-1.log"' in html and "<svg" in html
    assert read_json(tmp_path / f"{NAME}.json").artifacts["page"] == artifacts["page"]


def test_the_svg_is_the_same_for_the_same_report():
    assert scenario_page(make_report()) == scenario_page(make_report())


def test_a_lone_slow_step_is_no_slowdown_and_a_clean_exit_after_done_is_no_mark():
    ev, t = steps(0.0, 1, 30, lambda s: 2.0 if s in (10, 20, 21) else 0.1)  # epoch-end backups: spikes
    ev += [DoneEvent(t=t + 0.1, source=f"worker-{w}", step=30) for w in (0, 1)]
    ev += [ExitEvent(t=t + 0.5, source=f"worker-{w}", exit_code=0) for w in (0, 1)]
    kinds = [m.kind for m in picture(make_report(ev)).marks]
    assert kinds == ["done", "done"]
    ev.append(ExitEvent(t=t + 0.6, source="worker-1", exit_code=0))
    ev.append(RestartEvent(t=t + 0.55, source="worker-1"))  # a new process: its exit 0 counts again
    assert [m.kind for m in picture(make_report(ev)).marks] == ["done", "done", "restart", "exit"]


def test_rebuild_writes_pages_and_index_from_the_json_and_names_a_bad_file(tmp_path):
    from chaos.report import write_json
    from chaos.report.html_index import rebuild

    write_json(make_report(), tmp_path / f"{NAME}.json")
    (tmp_path / "torn.json").write_text('{"scenario": ')
    problems = rebuild(tmp_path)
    assert len(problems) == 1 and str(tmp_path / "torn.json") in problems[0] and "not a chaos report" in problems[0]
    assert (tmp_path / f"{NAME}.html").exists()
    assert f'<a href="{NAME}.html">' in (tmp_path / "index.html").read_text()
    assert "not a folder" in rebuild(tmp_path / "missing")[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no <scenario>.json report" in rebuild(empty)[0] and not (empty / "index.html").exists()
