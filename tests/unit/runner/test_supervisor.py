"""The supervisor's fault handling, run against a fake cluster.

The fake stands in for DockerCluster at its boundary: it records every call
in order, keeps fault overrides per worker per owner (applied when a worker
is (re)created, as DockerCluster does) and "trains": every time the
supervisor reads the event log, each worker reports one more step; after the
last step each reports done and exits 0. A restart resumes at the last epoch
boundary (a per-epoch backup) and the new generation reports its start event
on the next read, with a fingerprint made of the environment it was created
with.
"""

from __future__ import annotations

import time

import fake_backend
import pytest

from chaos.errors import InfrastructureError
from chaos.eventlog import EventLog
from chaos.events import (
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    HealEvent,
    InjectEvent,
    NoticeEvent,
    PhaseEvent,
    RestartEvent,
    StartEvent,
    StepEvent,
)
from chaos.runner import supervisor as supervisor_module
from chaos.runner.policy import Plan, State
from chaos.runner.supervisor import Supervisor
from chaos.scenario.loader import scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}


class TickingLog(EventLog):
    """An EventLog that lets the fake cluster advance before each read."""

    def __init__(self, tick):
        super().__init__()
        self._tick = tick

    def snapshot(self):
        self._tick()
        return super().snapshot()

    def peek(self):
        """The events so far, without training on."""
        return super().snapshot()


class FakeCluster(fake_backend.FakeCluster):
    def __init__(self, num_slots=2, steps_per_epoch=5, epochs=3):
        super().__init__(num_slots, usage_bytes=100 << 20, events=TickingLog(self._tick))
        self.steps_per_epoch = steps_per_epoch
        self.final_step = steps_per_epoch * epochs
        self.created: list[tuple[int, int, dict]] = []  # (generation, worker, config it was created with)
        self.generation = -1
        self.step = 0
        self.finished = False
        self.announce = False

    # --- what the supervisor drives ------------------------------------------------

    def start_workers(self):
        super().start_workers()
        self._create(range(self.num_slots))

    def wait_started(self, timeout=None):
        super().wait_started(timeout)
        self._announce()  # TF imported: the start events arrive before this returns

    def restart(self, indices, reason, grace_s=3.0):
        super().restart(indices, reason, grace_s)
        self.step -= self.step % self.steps_per_epoch  # resume from the last per-epoch backup
        self._create(indices)
        for i in indices:
            self.record(RestartEvent(t=time.time(), source=self.worker_name(i), reason=reason))
        self.announce = True  # the new generation starts after the restart returns

    def await_restarts(self, indices, reason, timeout_s=120.0):
        """The orchestrator restarted them: training resumes as after the runner's restart."""
        restarted = super().await_restarts(indices, reason, timeout_s)
        if restarted:
            self.step -= self.step % self.steps_per_epoch
            self._create(restarted)
            for i in restarted:
                self.record(RestartEvent(t=time.time(), source=self.worker_name(i), reason="exited", by="orchestrator"))
            self.announce = True
        return restarted

    # --- the fake training ---------------------------------------------------------

    def _create(self, indices):
        self.generation += 1
        for i in indices:
            config = {"env": {}, "settings": {}, "image": None}
            for o in self.overrides.get(i, {}).values():
                config["env"].update(o["env"])
                config["settings"].update(o["settings"])
                config["image"] = o["image"] or config["image"]
            self.created.append((self.generation, i, config))

    def _config(self, worker):
        return next(c for g, w, c in reversed(self.created) if w == worker)

    def _announce(self):
        for w in range(self.num_slots):
            fingerprint = {f"env:{k}": v for k, v in self._config(w)["env"].items()}
            self.record(
                StartEvent(t=time.time(), source=self.worker_name(w), tf_version="2.20", fingerprint=fingerprint)
            )
        self.announce = False

    def _tick(self):
        if self.generation < 0:
            return
        if self.announce:
            self._announce()
        elif self.step < self.final_step:
            self.step += 1
            epoch = (self.step - 1) // self.steps_per_epoch
            for w in range(self.num_slots):
                self.record(StepEvent(t=time.time(), source=self.worker_name(w), epoch=epoch, step=self.step))
        elif not self.finished:
            self.finished = True
            for w in range(self.num_slots):
                self.record(DoneEvent(t=time.time(), source=self.worker_name(w), step=self.step))
                self.record(ExitEvent(t=time.time(), source=self.worker_name(w), exit_code=0))

    # --- reading back ----------------------------------------------------------------

    def of(self, kind):
        return [e for e in self.events.peek() if isinstance(e, kind)]

    def names(self):
        return [c[0] for c in self.calls]


@pytest.fixture(autouse=True)
def no_poll_delay(monkeypatch):
    monkeypatch.setattr(supervisor_module, "POLL_S", 0)


def make_scenario(*faults, total=30, symptom=30):
    return scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {"workers": 2, "training": {"epochs": 3, "steps_per_epoch": 5}},
            "faults": list(faults),
            "timeouts": {"total": total, "symptom": symptom},
        }
    )


def run(scenario, cluster=None):
    cluster = cluster or FakeCluster()
    said: list[str] = []
    supervisor = Supervisor(scenario, cluster, said.append)
    return supervisor, cluster, said


SKEW = {"version_skew": {"workers": [1], "env": {"LD_LIBRARY_PATH": "/opt/cuda-11/lib64"}}, "at": "bring_up"}


# --- bring-up order and redeploys -------------------------------------------------------


def test_a_create_time_fault_is_injected_before_the_workers_start_and_others_after():
    throttle = {"cpu_throttle": {"worker": 1}, "at": "bring_up"}  # listed first on purpose
    supervisor, cluster, said = run(make_scenario(throttle, {**SKEW, "until": {"epoch": 1}}))
    outcome = supervisor.run()
    assert outcome.finished, outcome.reason
    names = cluster.names()
    assert (
        names.index("override") < names.index("start_workers") < names.index("limit_cpu") < names.index("wait_started")
    )
    # The bring-up generation was created skewed, the redeploy healthy.
    assert cluster.created[1] == (
        0,
        1,
        {"env": {"LD_LIBRARY_PATH": "/opt/cuda-11/lib64"}, "settings": {}, "image": None},
    )
    assert cluster.created[0][2]["env"] == {}
    assert [c for g, w, c in cluster.created if g == 1] == [{"env": {}, "settings": {}, "image": None}] * 2
    # Inject events in the order the faults acted: the skew before the throttle.
    assert [e.fault for e in cluster.of(InjectEvent)] == ["version_skew", "cpu_throttle"]


def test_a_timed_heal_of_a_create_time_fault_redeploys_every_worker_without_grace():
    supervisor, cluster, said = run(make_scenario({**SKEW, "until": {"epoch": 1}}))
    outcome = supervisor.run()
    assert outcome.finished and outcome.restarts == 0  # a redeploy is not a failure restart
    restarts = [c for c in cluster.calls if c[0] == "restart"]
    assert restarts == [("restart", [0, 1], "redeploy: version_skew healed", 0)]
    assert cluster.names().index("clear_override") < cluster.names().index("restart")
    heal = cluster.of(HealEvent)
    assert [(h.fault, h.target) for h in heal] == [("version_skew", "worker-1")]
    first_epoch_1_step = min(e.t for e in cluster.of(StepEvent) if e.epoch == 1)
    assert heal[0].t >= first_epoch_1_step  # healed when epoch 1 began, not before
    assert "recover" in [e.phase for e in cluster.of(PhaseEvent)]
    assert "restarting every worker (redeploy: version_skew healed)" in said


def test_the_skew_of_the_bring_up_generation_is_said_once():
    supervisor, cluster, said = run(make_scenario({**SKEW, "until": {"epoch": 1}}))
    supervisor.run()
    warnings = [s for s in said if s.startswith("ENVIRONMENT SKEW")]
    assert warnings == [
        "ENVIRONMENT SKEW: worker-1 differs from worker-0 in env:LD_LIBRARY_PATH: /opt/cuda-11/lib64 vs <absent>"
    ]


def test_a_create_time_fault_fired_mid_training_redeploys_on_inject_and_on_heal():
    reused = {"reused_seed": {}, "at": {"step": 3}, "until": {"step": 8}}
    supervisor, cluster, said = run(make_scenario(reused))
    outcome = supervisor.run()
    assert outcome.finished, outcome.reason
    assert [c for c in cluster.calls if c[0] == "restart"] == [
        ("restart", [0, 1], "redeploy: reused_seed injected", 0),
        ("restart", [0, 1], "redeploy: reused_seed healed", 0),
    ]
    by_generation = {}
    for g, _w, c in cluster.created:
        by_generation.setdefault(g, []).append(c["settings"])
    assert by_generation == {0: [{}, {}], 1: [{"shard_data": False}] * 2, 2: [{}, {}]}
    assert "fault" in [e.phase for e in cluster.of(PhaseEvent)]


def test_a_fault_that_is_not_create_time_is_never_redeployed():
    supervisor, cluster, said = run(
        make_scenario({"cpu_throttle": {"worker": 1}, "at": {"step": 3}, "until": {"step": 8}})
    )
    assert supervisor.run().finished
    assert "restart" not in cluster.names()
    assert [c for c in cluster.calls if c[0] in ("limit_cpu", "restore_cpu")] == [
        ("limit_cpu", 1, 0.1),
        ("restore_cpu", 1),
    ]


# --- inject failures ------------------------------------------------------------------------


def test_a_plain_exception_in_inject_becomes_an_infrastructure_error_naming_the_fault():
    cluster = FakeCluster()
    cluster.fail["limit_cpu"] = RuntimeError("409 container is not running")
    supervisor, cluster, said = run(make_scenario({"cpu_throttle": {"worker": 1}, "at": {"step": 2}}), cluster)
    with pytest.raises(InfrastructureError) as caught:
        supervisor.run()
    message = caught.value.message
    assert "fault cpu_throttle (at step 2) could not be injected into worker-1" in message
    assert "RuntimeError: 409 container is not running" in message
    assert caught.value.hint
    assert cluster.of(InjectEvent) == []
    del cluster.fail["limit_cpu"]
    supervisor.heal_all()
    assert cluster.of(HealEvent) == []


def test_heal_all_undoes_a_half_inject_but_records_no_heal_event():
    cluster = FakeCluster()
    cluster.fail["command"] = RuntimeError("exec failed")  # the limit is set, the demand never sent
    supervisor, cluster, said = run(make_scenario({"host_oom": {"worker": 1}, "at": {"step": 2}}), cluster)
    with pytest.raises(InfrastructureError, match="fault host_oom"):
        supervisor.run()
    del cluster.fail["command"]
    supervisor.heal_all()
    supervisor.heal_all()  # idempotent
    lifts = [c for c in cluster.calls if c[0] == "restore_memory"]
    assert len(lifts) == 1
    assert cluster.of(InjectEvent) == [] and cluster.of(HealEvent) == []


def test_a_chaos_error_in_inject_is_raised_unchanged():
    cluster = FakeCluster()
    original = InfrastructureError("worker-1 is not running: its memory use cannot be read", hint="fire earlier")
    cluster.fail["memory_usage"] = original
    supervisor, cluster, said = run(make_scenario({"host_oom": {"worker": 1}, "at": {"step": 2}}), cluster)
    with pytest.raises(InfrastructureError) as caught:
        supervisor.run()
    assert caught.value is original


def test_a_create_time_fault_that_fails_at_bring_up_starts_no_worker():
    cluster = FakeCluster()
    cluster.fail["override"] = InfrastructureError("image 'tfchaos/worker:tf2.15' is not built")
    supervisor, cluster, said = run(
        make_scenario({"version_skew": {"workers": [1], "tf_version": "2.15"}, "at": "bring_up"}), cluster
    )
    with pytest.raises(InfrastructureError, match="not built"):
        supervisor.run()
    assert "start_workers" not in cluster.names()


def test_a_recorded_fault_gets_its_heal_event_from_heal_all_once():
    supervisor, cluster, said = run(make_scenario({"cpu_throttle": {"worker": 1}, "at": {"step": 2}}))
    assert supervisor.run().finished  # never timed: still active at the end
    assert cluster.of(HealEvent) == []
    supervisor.heal_all()
    supervisor.heal_all()
    assert [(h.fault, h.target) for h in cluster.of(HealEvent)] == [("cpu_throttle", "worker-1")]


# --- what the policy cannot see: late faults, failed heals -----------------------------------


class FinishesFirst(FakeCluster):
    """The targeted worker reports done (and exits) before the signal lands."""

    def signal(self, index, signal):
        self.record(DoneEvent(t=time.time(), source=self.worker_name(index), step=self.step))
        self.record(ExitEvent(t=time.time(), source=self.worker_name(index), exit_code=0))
        super().signal(index, signal)


def test_a_fault_that_lands_after_its_target_finished_is_noticed():
    supervisor, cluster, said = run(make_scenario({"kill_worker": {"worker": 0}, "at": {"step": 14}}), FinishesFirst())
    supervisor.run()
    (notice,) = [e for e in cluster.of(NoticeEvent) if e.topic == "fault_late"]
    assert "fault 0 (kill_worker on worker-0)" in notice.text and "cannot be judged" in notice.text
    inject = cluster.of(InjectEvent)[0]
    assert inject.t <= inject.completed_t


def test_a_fault_that_lands_while_its_target_trains_is_not_noticed():
    supervisor, cluster, said = run(make_scenario({"pause_worker": {"worker": 1}, "at": {"step": 3}, "for": 0.01}))
    assert supervisor.run().finished
    assert cluster.of(NoticeEvent) == []


def test_a_heal_that_fails_is_recorded_and_the_other_faults_still_heal():
    cluster = FakeCluster()
    cluster.fail["unpause"] = RuntimeError("409 container is not paused")
    scenario = make_scenario(
        {"pause_worker": {"worker": 1}, "at": {"step": 2}},
        {"cpu_throttle": {"worker": 0}, "at": {"step": 3}},
    )
    supervisor, cluster, said = run(scenario, cluster)
    assert supervisor.run().finished
    supervisor.heal_all()
    (notice,) = cluster.of(NoticeEvent)
    assert notice.topic == "heal_failed"
    assert "pause_worker on worker-1" in notice.text and "RuntimeError: 409 container is not paused" in notice.text
    assert [(h.fault, h.target) for h in cluster.of(HealEvent)] == [("cpu_throttle", "worker-0")]
    supervisor.heal_all()  # a failed heal is not retried forever
    assert len(cluster.of(NoticeEvent)) == 1


# --- a user's job restarting with an empty checkpoint_dir ---------------------------------


class KilledJob(FakeCluster):
    """SIGKILL ends the target (137) and its peer (1); training stops until a restart."""

    def __init__(self, checkpoint_files):
        super().__init__()
        self._files = checkpoint_files
        self.halted = False

    def signal(self, index, signal):
        super().signal(index, signal)
        self.halted = True
        for w in range(self.num_slots):
            self.record(ExitEvent(t=time.time(), source=self.worker_name(w), exit_code=137 if w == index else 1))

    def restart(self, indices, reason, grace_s=3.0):
        self.halted = False
        super().restart(indices, reason, grace_s)

    def _tick(self):
        if not self.halted:
            super()._tick()

    def checkpoint_files(self):
        self.calls.append(("checkpoint_files",))
        return self._files


def users_job_scenario(workload=True):
    data = {
        "name": "x",
        "description": "d",
        "explain": EXPLAIN,
        "cluster": {"workers": 2, "recovery": {"restart": "all", "max_restarts": 1}},
        "faults": [{"kill_worker": {"worker": 1}, "at": {"seconds": 0}}],
        "timeouts": {"total": 30, "symptom": 30},
    }
    if workload:
        data["cluster"]["workload"] = {
            "image": "acme/trainer:1",
            "command": ["python", "train.py"],
            "checkpoint_dir": "/ckpt",
        }
    else:
        data["cluster"]["training"] = {"epochs": 3, "steps_per_epoch": 5}
    return scenario_from_dict(data)


@pytest.mark.parametrize("files, warned", [(0, True), (3, False), (None, False)])
def test_a_users_job_restarting_with_an_empty_checkpoint_dir_is_noticed(files, warned):
    supervisor, cluster, said = run(users_job_scenario(), KilledJob(files))
    supervisor.run()
    assert ("restart", [0, 1], cluster.calls[[c[0] for c in cluster.calls].index("restart")][2], 3.0) in cluster.calls
    notices = [e for e in cluster.of(NoticeEvent) if e.topic == "checkpoint_empty"]
    assert bool(notices) is warned
    # the kill's own exits, seen before its Docker call returned, do not make it "late"
    assert not [e for e in cluster.of(NoticeEvent) if e.topic == "fault_late"]
    if warned:
        assert "checkpoint_dir /ckpt" in notices[0].text and "step 0" in notices[0].text
        assert any(s.startswith("WARNING: nothing was written") for s in said)


def test_the_builtin_harness_is_not_asked_for_its_checkpoint_files():
    supervisor, cluster, said = run(users_job_scenario(workload=False), KilledJob(0))
    supervisor.run()
    assert "restart" in cluster.names() and "checkpoint_files" not in cluster.names()


class LingersAfterDone(FakeCluster):
    """Both workers report done; worker-1's process never exits."""

    def _tick(self):
        if self.step >= self.final_step and not self.finished:
            self.finished = True
            for w in range(self.num_slots):
                self.record(DoneEvent(t=time.time(), source=self.worker_name(w), step=self.step))
            self.record(ExitEvent(t=time.time(), source=self.worker_name(0), exit_code=0))
            return
        super()._tick()


def test_a_worker_lingering_after_done_is_noticed_and_the_finished_job_is_not_restarted():
    cluster = LingersAfterDone()
    supervisor = Supervisor(make_scenario(total=30, symptom=0.5), cluster, [].append)
    outcome = supervisor.run()
    assert outcome.finished and outcome.restarts == 0
    assert "restart" not in cluster.names()
    (notice,) = [e for e in cluster.of(NoticeEvent) if e.topic == "exit_after_done"]
    assert notice.text == "worker-1 reported done but did not exit within 0.5s (timeouts.symptom)"


# --- a parameter-server cluster: redeploys replace every container -------------------------


class ParameterServers(FakeCluster):
    """Chief (coordinator) + 2 workers + 1 ps: 4 containers, the coordinator alone trains.

    Like DockerCluster, ``num_slots`` counts containers (one per TF task).
    """

    def __init__(self):
        super().__init__(num_slots=4)

    def _tick(self):
        if self.generation < 0:
            return
        if self.announce:
            self._announce()
        elif self.step < self.final_step:
            self.step += 1
            epoch = (self.step - 1) // self.steps_per_epoch
            self.record(StepEvent(t=time.time(), source=self.worker_name(0), epoch=epoch, step=self.step))
        elif not self.finished:
            self.finished = True
            self.record(DoneEvent(t=time.time(), source=self.worker_name(0), step=self.step))
            self.record(ExitEvent(t=time.time(), source=self.worker_name(0), exit_code=0))


def ps_scenario(*faults):
    return scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "ps": 1,
                "training": {"strategy": "parameter_server", "epochs": 3, "steps_per_epoch": 5},
            },
            "faults": list(faults),
            "timeouts": {"total": 30, "symptom": 30},
        }
    )


def test_a_parameter_server_redeploy_replaces_every_container_the_fault_overrode():
    skew = {"seed_skew": {"mode": "per_worker"}, "at": {"epoch": 1}, "until": {"epoch": 2}}
    supervisor, cluster, said = run(ps_scenario(skew), ParameterServers())
    outcome = supervisor.run()
    assert outcome.finished, outcome.reason
    assert [c[1] for c in cluster.calls if c[0] == "override"] == [0, 1, 2, 3]
    assert [c for c in cluster.calls if c[0] == "restart"] == [
        ("restart", [0, 1, 2, 3], "redeploy: seed_skew injected", 0),
        ("restart", [0, 1, 2, 3], "redeploy: seed_skew healed", 0),
    ]
    by_generation: dict[int, list] = {}
    for g, w, c in cluster.created:
        by_generation.setdefault(g, []).append((w, c["settings"]))
    # Every container of the skewed generation runs the skew, and none of the healed one does.
    assert by_generation[1] == [(w, {"seeding": "per_worker"}) for w in range(4)]
    assert by_generation[2] == [(w, {}) for w in range(4)]


def test_a_parameter_server_cluster_says_its_skew_once_every_container_started():
    skew = {
        "version_skew": {"workers": [3], "env": {"LD_LIBRARY_PATH": "/opt/x"}},
        "at": "bring_up",
        "until": {"epoch": 1},
    }
    supervisor, cluster, said = run(ps_scenario(skew), ParameterServers())
    assert supervisor.run().finished
    warnings = [s for s in said if s.startswith("ENVIRONMENT SKEW")]
    assert warnings == ["ENVIRONMENT SKEW: worker-3 differs from worker-0 in env:LD_LIBRARY_PATH: /opt/x vs <absent>"]


class BreaksAtItsFirstSave(FakeCluster):
    """worker-0's job fails on its own at step 7 (its first save), before any fault."""

    def _tick(self):
        if self.step == 7 and not self.finished:
            self.finished = True
            self.record(
                ErrorEvent(
                    t=time.time(),
                    source="worker-0",
                    error_class="tensorflow.python.framework.errors_impl.PermissionDeniedError",
                    message="/shared/backup/workertemp_1; Permission denied",
                )
            )
            self.record(ExitEvent(t=time.time(), source="worker-0", exit_code=1))
            return
        if not self.finished:
            super()._tick()


def test_a_job_that_breaks_before_the_fault_is_an_error_with_its_own_error_never_a_restart():
    scenario = make_scenario({"kill_worker": {"worker": 1}, "at": {"step": 12}})
    supervisor, cluster, said = run(scenario, BreaksAtItsFirstSave())
    with pytest.raises(InfrastructureError) as caught:
        supervisor.run()
    message = caught.value.message
    assert message.startswith(
        "worker-0 (exit code 1) exited with an error at step 7, with no fault injected "
        "(fault 0, kill_worker, was due at step 12): the workload itself fails, not from a fault"
    )
    assert "its error: worker-0: PermissionDeniedError: /shared/backup/workertemp_1; Permission denied" in message
    assert "--- worker-0, last lines ---\nlog of worker-0" in message  # the job's own log
    assert "run the job's image by hand" in caught.value.hint
    assert "restart" not in cluster.names() and "signal" not in cluster.names()  # nothing injected, no restart


# --- a bring-up fault's window and the time TensorFlow takes to import ----------------------


class SlowStartCluster(FakeCluster):
    """Workers that take ``import_s`` of a fake clock to start (a loaded machine), then
    train one step per read of the log, ``step_s`` apart."""

    def __init__(self, clock, import_s, step_s=1.0, **kw):
        super().__init__(**kw)
        self.clock = clock
        self.import_s = import_s
        self.step_s = step_s

    def wait_started(self, timeout):
        self.clock[0] += self.import_s
        super().wait_started(timeout)

    def _tick(self):
        self.clock[0] += self.step_s
        super()._tick()


def test_a_bring_up_faults_for_counts_from_the_workers_start_not_from_its_inject(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])  # the fake workers' event stamps
    fault = {"cpu_throttle": {"worker": 1}, "at": "bring_up", "for": 30}
    cluster = SlowStartCluster(clock, import_s=45.0, steps_per_epoch=20, epochs=3)
    supervisor = Supervisor(
        make_scenario(fault, total=600), cluster, None, clock=lambda: clock[0], sleep=lambda s: None
    )
    supervisor.run()
    (inject,), (heal,) = cluster.of(InjectEvent), cluster.of(HealEvent)
    started = [p.t for p in cluster.of(PhaseEvent) if p.phase == "training"][0]
    assert inject.t == 1000.0 and started == 1045.0
    # Before: healed at inject + 30 s, 15 s before any worker had even started.
    assert heal.t >= started + 30 and heal.t < started + 30 + 2
    history = cluster.events.peek()
    assert any(isinstance(e, StepEvent) for e in history[: history.index(heal)])  # training ran under the fault


def test_no_restart_is_expected_once_every_fault_fired_and_healed():
    kill = {"kill_worker": {"worker": 1}, "at": {"step": 3}}
    later = {"kill_worker": {"worker": 1}, "at": {"step": 9}}
    scenario = scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {
                "workers": 2,
                "training": {"epochs": 3, "steps_per_epoch": 5},
                "recovery": {"restart": "all", "max_restarts": 2},
            },
            "faults": [kill, later],
            "timeouts": {"total": 30, "symptom": 30},
        }
    )
    supervisor, cluster, _ = run(scenario, KilledJob(checkpoint_files=2))
    assert supervisor.run().finished
    said = [c[1] for c in cluster.calls if c[0] == "expect_restarts"]
    assert said == [True, False]  # the second kill was still to come at the first restart


# --- work a fault does ahead of its inject ------------------------------------------------


class NetnsAhead(FakeCluster):
    """A cluster with packet faults' namespaces that can start a helper ahead (DockerCluster.netns_ahead);
    the packet faults' act is the fixture's below, so its helper is never used."""

    def netns(self, index):
        self._call("netns", index)

    def netns_ahead(self, index):
        self._call("netns_ahead", index)


@pytest.fixture
def packet_faults_act_on_the_fake(monkeypatch):
    from chaos.faults.packet import PacketFault

    monkeypatch.setattr(PacketFault, "act", lambda self, cluster, undo: cluster._call("packet_act", self.worker))


@pytest.mark.usefixtures("packet_faults_act_on_the_fake")
def test_a_fault_to_come_is_prepared_while_the_workers_import_one_at_bring_up_is_not():
    supervisor, cluster, said = run(
        make_scenario(
            {"mtu_blackhole": {"worker": 0}, "at": "bring_up", "for": 1},
            {"mtu_blackhole": {"worker": 1}, "at": {"step": 2}, "for": 1},
        ),
        NetnsAhead(),
    )
    assert supervisor.run().finished
    names = cluster.names()
    assert [c for c in cluster.calls if c[0] == "netns_ahead"] == [("netns_ahead", 1)]
    assert names.index("start_workers") < names.index("netns_ahead") < names.index("wait_started")
    assert [c for c in cluster.calls if c[0] == "packet_act"] == [("packet_act", 0), ("packet_act", 1)]


@pytest.mark.usefixtures("packet_faults_act_on_the_fake")
def test_a_prepare_that_fails_leaves_the_work_to_the_inject_and_says_so():
    cluster = NetnsAhead()
    cluster.fail["netns_ahead"] = RuntimeError("409 conflict")
    supervisor, cluster, said = run(make_scenario({"silent_drop": {"worker": 1}, "at": {"step": 2}, "for": 1}), cluster)
    assert supervisor.run().finished
    assert ("packet_act", 1) in cluster.calls and [e.fault for e in cluster.of(InjectEvent)] == ["silent_drop"]
    assert any("could not be prepared ahead (RuntimeError: 409 conflict); its inject will do it" in s for s in said)


def test_a_cluster_without_a_way_ahead_is_not_asked():
    from chaos.faults.packet import SilentDrop

    cluster = FakeCluster()

    SilentDrop(worker=1).prepare(cluster)  # no netns_ahead on this cluster: nothing to do, no error
    assert "netns_ahead" not in cluster.names()


# --- containers made ahead only when a restart can come ------------------------------------


@pytest.mark.parametrize(
    "recovery, faults, expected",
    [
        (
            {"restart": "none", "max_restarts": 0},
            [{"cpu_throttle": {"worker": 1}, "at": {"step": 2}, "for": 1}],
            [False],
        ),
        (
            {"restart": "all", "max_restarts": 0},
            [{"cpu_throttle": {"worker": 1}, "at": {"step": 2}, "for": 1}],
            [False],
        ),
        ({"restart": "none", "max_restarts": 0}, [{**SKEW, "until": {"epoch": 1}}], []),  # its heal redeploys
        ({"restart": "all", "max_restarts": 1}, [{"cpu_throttle": {"worker": 1}, "at": {"step": 2}, "for": 1}], []),
    ],
)
def test_no_restart_is_expected_from_the_start_when_none_can_come(recovery, faults, expected):
    scenario = scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "cluster": {"workers": 2, "training": {"epochs": 3, "steps_per_epoch": 5}, "recovery": recovery},
            "faults": faults,
            "timeouts": {"total": 30, "symptom": 30},
        }
    )
    supervisor, cluster, _ = run(scenario)
    supervisor.run()
    before_start = cluster.calls[: cluster.names().index("start_workers")]
    assert [c[1] for c in before_start if c[0] == "expect_restarts"] == expected


# --- waking on a due trigger ------------------------------------------------------------


def test_the_step_that_makes_the_next_fault_due_wakes_the_loop_before_its_poll(monkeypatch):
    """A fault fires when its step is seen, not up to a poll (0.2 s, 10-40 of the harness's
    steps under load) later: the step event's follower wakes the waiting loop."""
    import threading

    monkeypatch.setattr(supervisor_module, "POLL_S", 0.2)  # the real poll (this module's runs use 0)
    scenario = make_scenario({"kill_worker": {"worker": 1}, "at": {"step": 3}})
    supervisor = Supervisor(scenario, FakeCluster())
    supervisor._watch(State.start(Plan.of(scenario), 0.0, {}))
    supervisor._wake_if_due(StepEvent(t=0.0, source="worker-0", step=2, epoch=0))
    assert not supervisor._due.is_set()  # not yet due: the loop sleeps its poll
    t0 = time.monotonic()
    supervisor._pause()
    assert time.monotonic() - t0 >= supervisor_module.POLL_S * 0.9

    later = threading.Timer(0.03, supervisor._wake_if_due, [StepEvent(t=0.0, source="worker-1", step=3, epoch=0)])
    t0 = time.monotonic()
    later.start()
    supervisor._pause()
    assert time.monotonic() - t0 < supervisor_module.POLL_S * 0.75
    assert not supervisor._due.is_set()  # cleared: the next pause waits again

    supervisor._watch(State.start(Plan.of(scenario), 0.0, {0: 0.0}))  # it fired: no step wakes the loop
    supervisor._wake_if_due(StepEvent(t=0.0, source="worker-1", step=9, epoch=1))
    assert not supervisor._due.is_set()


def test_the_step_that_makes_an_active_faults_until_due_wakes_the_loop():
    """A heal at `until: {step: 30}` is watched like an inject: a poll late, a fast job is at its
    next save (CI: a redeploy due at step 30 landed at the chief's save at step 40)."""
    scenario = make_scenario(
        {"version_skew": {"workers": [0], "env": {"A": "1"}}, "at": "bring_up", "until": {"step": 10}}
    )
    supervisor = Supervisor(scenario, FakeCluster())
    supervisor._watch(State.start(Plan.of(scenario), 0.0, {}))
    supervisor._wake_if_due(StepEvent(t=0.0, source="worker-0", step=10, epoch=1))
    assert not supervisor._due.is_set()  # not yet injected: its until is not watched
    supervisor._watch(State.start(Plan.of(scenario), 0.0, {0: 0.0}))
    supervisor._wake_if_due(StepEvent(t=0.0, source="worker-0", step=9, epoch=1))
    assert not supervisor._due.is_set()
    supervisor._wake_if_due(StepEvent(t=0.0, source="worker-1", step=10, epoch=1))
    assert supervisor._due.is_set()
