"""A job whose TF the agent cannot hook runs as ``agent: none`` would (issue 38, "Bad input"):
its steps come from the scenario's ``progress`` pattern once the agent said it cannot see
them, the run is judged with agent: none's evidence, and what that cannot judge is unknown,
naming why. Against the fake cluster of test_supervisor, whose workers' output goes through
the launch's own log parser line by line, as the Docker backend's log follower feeds it."""

from __future__ import annotations

import json
import time

import pytest

from chaos.checks import run_checks
from chaos.checks.verdict import Status
from chaos.events import STEPS_UNOBSERVED, DoneEvent, ExitEvent, InjectEvent, LogLine, NoticeEvent, StepEvent
from chaos.runner.runinfo import run_info
from chaos.runner.supervisor import Supervisor
from chaos.scenario.loader import scenario_from_dict
from chaos.timeline import Timeline
from chaos.workload.launch import Launch, ProgressFallback
from chaos.workload.spec import WorkloadSpec
from tests.unit.runner.test_supervisor import EXPLAIN, KilledJob, no_poll_delay  # noqa: F401 - the fixture, autouse there

PROGRESS = {"step": r"^step (?P<step>\d+) loss (?P<loss>[0-9.]+)", "done": "^training finished"}


def notice(source="worker-0", topic=STEPS_UNOBSERVED):
    return json.dumps(
        {
            "event": "notice",
            "t": time.time(),
            "source": source,
            "topic": topic,
            "text": "the agent cannot hook this TensorFlow's tf.function (TensorFlow 2.99, no ...): ...",
        }
    )


def parser(progress=PROGRESS, agent="auto"):
    spec = WorkloadSpec.model_validate(
        {"image": "acme/trainer:1", "checkpoint_dir": "/ckpt", "agent": agent, "progress": progress}
    )
    return Launch.of(spec).parser("worker-0")


def fed(p, *lines):
    return [e for line in lines for e in p.feed(line, 1.0)]


def test_with_the_agent_a_logged_step_counts_only_once_the_agent_said_it_cannot_see_the_steps():
    p = parser()
    assert isinstance(p, ProgressFallback)
    before = fed(p, "step 1 loss 0.5")
    assert not [e for e in before if isinstance(e, StepEvent)]  # the agent reports steps: no double count
    after = fed(p, notice(), "step 2 loss 0.4", "training finished")
    steps = [e for e in after if isinstance(e, StepEvent)]
    assert [(s.step, s.loss, s.logged) for s in steps] == [(2, 0.4, True)]
    assert [e for e in after if isinstance(e, DoneEvent)]
    assert [e.text for e in after if isinstance(e, LogLine)] == ["step 2 loss 0.4", "training finished"]


def test_a_step_the_agent_reports_ends_the_fallback_and_passes_unmarked():
    p = parser()
    agent_step = json.dumps({"event": "step", "t": 2.0, "source": "worker-0", "step": 3, "loss": 0.1})
    out = fed(p, notice(), agent_step, "step 3 loss 0.1")
    steps = [e for e in out if isinstance(e, StepEvent)]
    assert [(s.step, s.logged) for s in steps] == [(3, False)]  # fit's hook or a report call sees them


def test_another_notice_of_the_agent_changes_nothing():
    p = parser()
    out = fed(p, notice(topic="agent"), "step 1 loss 0.5")
    assert not [e for e in out if isinstance(e, StepEvent)]


def test_without_the_agent_or_without_a_pattern_the_parser_is_the_plain_one():
    assert not isinstance(parser(agent="none"), ProgressFallback)
    assert not isinstance(parser(progress=None), ProgressFallback)
    assert [e.step for e in fed(parser(agent="none"), "step 1 loss 0.5") if isinstance(e, StepEvent)] == [1]


@pytest.mark.parametrize("progress", [PROGRESS, None])
def test_the_run_is_judged_with_agent_nones_evidence_and_says_why(progress):
    spec = WorkloadSpec.model_validate(
        {"image": "acme/trainer:1", "checkpoint_dir": "/ckpt", "agent": "auto", "progress": progress}
    )
    said = NoticeEvent(t=1.0, source="worker-0", topic=STEPS_UNOBSERVED, text="the agent cannot hook X (why): more")
    evidence, label = spec.judged_as([said])
    expected = {"errors", "start", *(("steps", "done") if progress else ())}
    assert {e.value for e in evidence} == expected
    assert label.startswith("agent: auto, judged as agent: none: on worker-0 the agent cannot hook X;")
    assert ("steps from its progress pattern" in label) is bool(progress)
    # The agent saw steps after all (Keras fit's hook, a report call): its evidence stands.
    seen = StepEvent(t=2.0, source="worker-0", step=1)
    assert spec.judged_as([said, seen]) == (spec.evidence, "agent: auto")
    assert spec.judged_as([]) == (spec.evidence, "agent: auto")


class UnhookedJob(KilledJob):
    """Workers whose output is lines through the launch's parser: at TF's import the agent's start
    event and its notice that it cannot hook steps; then the job's own "step N loss L" lines and
    "training finished". SIGKILL ends the target and its peer; a restart resumes at the last epoch
    boundary (test_supervisor's KilledJob)."""

    def __init__(self, launch):
        super().__init__(checkpoint_files=3)
        self.launch = launch
        self.parsers = {}

    def _feed(self, worker, line):
        for event in self.parsers[worker].feed(line, time.time()):
            self.record(event)

    def _announce(self):
        for w in range(self.num_slots):
            self.parsers[w] = self.launch.parser(self.worker_name(w))
            start = {"event": "start", "t": time.time(), "source": self.worker_name(w), "tf_version": "2.99"}
            self._feed(w, json.dumps(start))
            self._feed(w, notice(self.worker_name(w)))
        self.announce = False

    def _tick(self):
        if self.generation < 0 or self.halted:
            return
        if self.announce:
            self._announce()
        elif self.step < self.final_step:
            self.step += 1
            for w in range(self.num_slots):
                self._feed(w, f"step {self.step} loss 0.5")
        elif not self.finished:
            self.finished = True
            for w in range(self.num_slots):
                self._feed(w, "training finished")
                self.record(ExitEvent(t=time.time(), source=self.worker_name(w), exit_code=0))


def test_a_job_the_agent_cannot_hook_is_killed_at_its_step_and_judged_from_its_logs():
    scenario = scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "workload": {"image": "acme/trainer:1", "checkpoint_dir": "/ckpt", "progress": PROGRESS},
                "recovery": {"restart": "all", "max_restarts": 1},
            },
            "faults": [{"kill_worker": {"worker": 1}, "at": {"step": 8}}],
            "recover": [{"resumed_from": {"step": 5}}, {"completed": {}}, {"restored_same_checkpoint": {}}],
            "timeouts": {"total": 30, "symptom": 30},
        }
    )
    cluster = UnhookedJob(Launch.of(scenario.cluster.workload))
    Supervisor(scenario, cluster, lambda _msg: None).run()
    events = cluster.events.peek()
    inject = next(e for e in events if isinstance(e, InjectEvent))
    before = [e.step for e in events if isinstance(e, StepEvent) and e.t <= inject.t]
    assert max(before) >= 8 and all(e.logged for e in events if isinstance(e, StepEvent))  # the trigger fired
    timeline = Timeline(run_info(scenario, events), events)
    assert timeline.info.workload.startswith("agent: auto, judged as agent: none")
    verdicts = {v.check: v for v in run_checks(scenario.recover, timeline)}
    assert verdicts["resumed_from"].status is Status.PASS, verdicts["resumed_from"].reason
    assert verdicts["completed"].status is Status.PASS, verdicts["completed"].reason
    # What agent: none cannot judge is unknown, naming why: never a fail for an event the agent could not send.
    restored = verdicts["restored_same_checkpoint"]
    assert restored.status is Status.UNKNOWN and "judged as agent: none" in restored.reason, restored.reason
