import textwrap
from pathlib import Path

import pytest

from chaos.checks import Completed, ErrorRaised
from chaos.errors import ScenarioError
from chaos.faults import KillWorker, Latency
from chaos.scenario import AtBringUp, AtEpoch, AtSeconds, AtStep, Explain, FaultStep, Scenario
from chaos.scenario.loader import load_scenario, scenario_from_dict

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}


def problems(data):
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN, **data}, "x.yaml")
    assert caught.value.hint
    return caught.value.message


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_minimal_scenario_takes_the_defaults():
    scenario = scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN})
    assert scenario.cluster.workers == 2
    assert scenario.cluster.tf_version_of(1) == "2.21"
    training = scenario.cluster.training
    assert (training.epochs, training.steps_per_epoch, training.save_freq, training.collective_timeout_s) == (
        5,
        20,
        "epoch",
        0,
    )
    assert scenario.cluster.recovery.restart == "all"


def test_faults_and_checks_parse_into_typed_values():
    scenario = scenario_from_dict(
        {
            "name": "x",
            "description": "d",
            "explain": EXPLAIN,
            "faults": [
                {"blocked_port": {"worker": 1}, "at": "bring_up", "for": 30},
                {"kill_worker": {"worker": 0}, "at": {"epoch": 2}},
                {"latency": {"worker": 1, "latency_ms": 5}, "at": {"step": 50}},
                {"partition": {"worker": 1}, "at": {"seconds": 2.5}},
            ],
            "expect": [{"error": {"class": "UnavailableError", "workers": [1]}}],
            "recover": [{"completed": None}, {"lost_work": {}}],
        }
    )
    first = scenario.faults[0]
    assert isinstance(first, FaultStep) and first.fault.mode == "refused" and first.for_s == 30
    assert isinstance(first.at, AtBringUp) and first.at.before_start
    assert scenario.faults[1].fault == KillWorker(worker=0)
    assert [type(s.at) for s in scenario.faults] == [AtBringUp, AtEpoch, AtStep, AtSeconds]
    assert scenario.expect[0].class_ == "UnavailableError"
    assert [c.name for c in scenario.checks] == ["error", "completed", "lost_work"]


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"faults": [{"latncy": {"worker": 1}, "at": "bring_up"}]},
            "faults[0]: unknown fault 'latncy'; valid: kill_worker",
        ),
        ({"faults": [{"latncy": {"worker": 1}, "at": "bring_up"}]}, "did you mean 'latency'?"),
        ({"faults": [{"kill_worker": {"worker": "one"}, "at": "bring_up"}]}, "faults[0].kill_worker.worker:"),
        (
            {"faults": [{"kill_worker": {"wroker": 1}, "at": "bring_up"}]},
            "faults[0].kill_worker.wroker: unknown key; valid keys: worker, task, signal; did you mean 'worker'?",
        ),
        (
            {"faults": [{"kill_worker": {"worker": 1, "signal": "SIGKIL"}, "at": "bring_up"}]},
            "valid: SIGKILL, SIGTERM; did you mean 'SIGKILL'?",
        ),
        (
            {"faults": [{"kill_worker": {"worker": 1}, "at": {"epoc": 1}}]},
            "faults[0].at: unknown trigger 'epoc'; valid: bring_up, {step: N}, {epoch: N} or {seconds: S}; did you mean 'epoch'?",
        ),
        ({"faults": [{"kill_worker": {"worker": 1}, "at": "bringup"}]}, "did you mean 'bring_up'?"),
        (
            {"faults": [{"kill_worker": {"worker": 1}, "at": "bring_up", "fro": 2}]},
            "faults[0].fro: unknown key; valid keys: at, for, until, kill_worker; did you mean 'for'?",
        ),
        ({"faults": [{"at": "bring_up"}]}, "faults[0]: names no fault"),
        ({"faults": [{"version_skew": {}, "at": "bring_up"}]}, "faults[0].version_skew: give tf_version, image or env"),
        (
            {"faults": [{"cpu_throtle": {"worker": 1}, "at": "bring_up"}]},
            "unknown fault 'cpu_throtle'; valid: kill_worker",
        ),
        ({"faults": [{"cpu_throtle": {"worker": 1}, "at": "bring_up"}]}, "did you mean 'cpu_throttle'?"),
        ({"expect": [{"stal": {"min_s": 1}}]}, "expect[0]: unknown symptom check 'stal'"),
        ({"recover": [{"error": {"class": "X"}}]}, "recover[0]: unknown recovery check 'error'"),
        (
            {"recover": [{"lost_work": {"max_step": 1}}]},
            "recover[0].lost_work.max_step: unknown key; valid keys: max_steps",
        ),
        ({"cluster": {"workers": 17}}, "cluster.workers: must be <= 16 (got 17)"),
        ({"cluster": {"tf_version": 2.2}}, "quote the version"),
        (
            {"cluster": {"training": {"save_freq": "epochs"}}},
            "cluster.training.save_freq: must be 'epoch' or a number of steps",
        ),
        (
            {"cluster": {"recovery": {"restart": "al"}}},
            "cluster.recovery.restart: 'al' is not valid; valid: all, failed, none; did you mean 'all'?",
        ),
        (
            {"timeout": {}},
            "timeout: unknown key; valid keys: name, description, explain, cluster, faults, expect, recover, signatures, timeouts; did you mean 'timeouts'?",
        ),
    ],
)
def test_errors_name_the_path_the_valid_values_and_a_close_match(data, expected):
    message = problems(data)
    assert message.startswith("x.yaml: ")
    assert expected in message


def test_cross_field_problems_are_reported_with_their_paths():
    message = problems(
        {
            "cluster": {"workers": 2, "training": {"epochs": 3, "steps_per_epoch": 10}},
            "faults": [
                {"kill_worker": {"worker": 3}, "at": {"epoch": 3}},
                {"latency": {"worker": 1, "latency_ms": 1}, "at": {"step": 31}},
                {"partition": {"worker": 1}, "at": "bring_up"},
            ],
            "expect": [{"error": {"class": "X", "workers": [2], "fault": 5}}],
        }
    )
    assert "faults[0].kill_worker.worker: 3 is out of range; valid: 0..1" in message
    assert "faults[0].at.epoch: 3 is past the last epoch" in message
    assert "faults[1].at.step: 31 is past the last step (30)" in message
    assert "faults[2].at: bring_up must come before" in message
    assert "expect[0].error.workers: 2 is out of range" in message
    assert "expect[0].error.fault: 5 is out of range; valid: 0..2" in message


def test_symptom_checks_need_a_fault():
    assert "faults is empty" in problems({"expect": [{"stall": {"min_s": 1}}]})


def test_global_batch_must_split_evenly():
    assert "not divisible by 3 workers" in problems({"cluster": {"workers": 3}})


def test_a_file_error_names_the_file_and_the_line(tmp_path):
    path = write(tmp_path, "bad.yaml", "name: bad\ndescription: [unclosed\n")
    with pytest.raises(ScenarioError, match=r"bad.yaml:\d+:\d+: not valid YAML"):
        load_scenario(path)


def test_duplicate_keys_are_errors(tmp_path):
    path = write(tmp_path, "dup.yaml", "name: dup\nname: dup\n")
    with pytest.raises(ScenarioError, match="'name' is given twice"):
        load_scenario(path)


def test_files_cannot_build_python_objects(tmp_path):
    path = write(tmp_path, "evil.yaml", "name: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(
        ScenarioError, match=r"evil.yaml:1:7: the tag '!!python/object/apply:os.system' is not supported"
    ):
        load_scenario(path)


def test_yes_no_on_off_stay_strings(tmp_path):
    path = write(
        tmp_path,
        "words.yaml",
        """\
        name: words
        description: "on"
        explain: {symptom: yes, cause: no, fix: off}
        """,
    )
    scenario = load_scenario(path)
    assert (scenario.description, scenario.explain.symptom, scenario.explain.fix) == ("on", "yes", "off")


def test_the_name_must_match_the_file(tmp_path):
    path = write(tmp_path, "other.yaml", "name: x\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\n")
    with pytest.raises(ScenarioError, match="differs from the file name 'other'"):
        load_scenario(path)


def test_missing_file():
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario("no/such/file.yaml")


def test_a_scenario_built_in_python_equals_its_yaml_round_trip():
    scenario = Scenario(
        name="built-in-python",
        description="d",
        explain=Explain(**EXPLAIN),
        faults=[
            FaultStep(KillWorker(worker=1), AtBringUp()),
            FaultStep(Latency(worker=1, latency_ms=100), AtEpoch(epoch=1), for_s=8),
        ],
        expect=[ErrorRaised(class_="UnavailableError", workers=[0])],
        recover=[Completed()],
    )
    data = scenario.to_dict()
    assert data["faults"][0] == {"kill_worker": {"worker": 1, "signal": "SIGKILL"}, "at": "bring_up"}
    assert data["faults"][1]["for"] == 8
    assert data["expect"] == [
        {"error": {"fault": 0, "class": "UnavailableError", "message": ".*", "workers": [0], "within_s": 60.0}}
    ]
    assert scenario_from_dict(data) == scenario


def test_python_construction_checks_references_too():
    with pytest.raises(ScenarioError, match=r"faults\[0\].kill_worker.worker: 3 is out of range"):
        Scenario(
            name="x", description="d", explain=Explain(**EXPLAIN), faults=[FaultStep(KillWorker(worker=3), AtBringUp())]
        )


def test_run_info_carries_what_checks_need():
    scenario = scenario_from_dict(
        {"name": "x", "description": "d", "explain": EXPLAIN, "cluster": {"training": {"save_freq": 7, "epochs": 3}}}
    )
    info = scenario.run_info(reference_digest="abc")
    assert (info.num_workers, info.save_interval_steps, info.final_step, info.reference_digest) == (2, 7, 60, "abc")


def test_triggers_say_when_they_are_due():
    assert AtStep(step=30).due(step=30) and not AtStep(step=30).due(step=29) and not AtStep(step=1).due()
    assert AtEpoch(epoch=2).due(epoch=2) and not AtEpoch(epoch=2).due(epoch=1)
    assert AtSeconds(seconds=5).due(elapsed_s=5.1) and not AtSeconds(seconds=5).due(elapsed_s=1)
    assert AtBringUp().due() and AtBringUp.before_start and not AtEpoch.before_start


def test_training_spec_fields_match_the_worker_settings():
    settings = pytest.importorskip("chaos.worker.settings")
    from chaos.scenario import TrainingSpec

    worker_fields = set(settings.WorkerSettings.__dataclass_fields__)
    assert set(TrainingSpec.model_fields) <= worker_fields
    built = settings.WorkerSettings(
        **scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN}).cluster.worker_settings()
    )
    assert built.save_interval_steps == 20
