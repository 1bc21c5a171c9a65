"""Values that parse but are wrong: strict types, bounds, settings that cannot work
(errors naming the field) and settings that cannot matter (warnings naming the field)."""

import re

import pytest

from chaos.checks import RECOVERY_CHECKS, SYMPTOM_CHECKS, Check, ErrorRaised
from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.scenario import Explain, Scenario
from chaos.scenario.loader import scenario_from_dict
from chaos.text import clean, shown

EXPLAIN = {"symptom": "s", "cause": "c", "fix": "f"}
KILL = {"kill_worker": {"worker": 1}, "at": {"epoch": 1}}  # 5 epochs of 20 steps by default
THROTTLE = {"cpu_throttle": {"worker": 1}, "at": {"epoch": 1}}


def scenario(**data):
    return scenario_from_dict({"name": "x", "description": "d", "explain": EXPLAIN, **data}, "x.yaml")


def problem(**data):
    with pytest.raises(ScenarioError) as caught:
        scenario(**data)
    assert caught.value.hint
    return caught.value.message


# --- strict types: YAML values are not coerced ---------------------------------------


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"cluster": {"workers": True}}, "cluster.workers: must be a whole number; got true"),
        (
            {"cluster": {"workers": "3"}},
            "cluster.workers: must be a whole number; got the text '3' (remove the quotes)",
        ),
        ({"cluster": {"workers": 2.0}}, "cluster.workers: must be a whole number; got the number 2.0 (write 2)"),
        (
            {"cluster": {"training": {"heartbeat_timeout_s": "10"}}},
            "cluster.training.heartbeat_timeout_s: must be a number; got the text '10'",
        ),
        (
            {"faults": [{"kill_worker": {"worker": True}, "at": "bring_up"}]},
            "faults[0].kill_worker.worker: must be a whole number; got true",
        ),
        (
            {"faults": [{"latency": {"worker": 1, "latency_ms": "5"}, "at": "bring_up"}]},
            "faults[0].latency.latency_ms: must be a whole number; got the text '5'",
        ),
        ({"description": 5}, "description: must be text; got the number 5 (quote it)"),
        ({"cluster": 5}, "cluster: must be a mapping (key: value); got the number 5"),
        ({"faults": {"a": 1}}, "faults: must be a list; got a mapping {a: 1}"),
        (
            {"faults": [KILL], "expect": [{"exit_code": {"code": True}}]},
            "expect[0].exit_code.code: must be an exit code 0..255 or nonzero (got true)",
        ),
        (
            {"cluster": {"training": {"save_freq": True}}},
            "cluster.training.save_freq: must be 'epoch' or a number of steps >= 1 (got true)",
        ),
    ],
)
def test_values_are_typed_strictly(data, expected):
    assert expected in problem(**data)


# --- bounds: finite, and within what the consumers take -------------------------------


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"timeouts": {"total": float("inf")}}, "timeouts.total: must be a finite number; got the number inf"),
        ({"timeouts": {"total": 1e300}}, "timeouts.total: must be <= 86400.0 (got 1e+300)"),
        (
            {"cluster": {"training": {"heartbeat_timeout_s": float("inf")}}},
            "cluster.training.heartbeat_timeout_s: must be a finite number",
        ),
        (
            {"cluster": {"training": {"heartbeat_timeout_s": 1e9}}},
            "cluster.training.heartbeat_timeout_s: must be <= 3600.0",
        ),
        ({"cluster": {"training": {"seed": 2**32}}}, "cluster.training.seed: must be <= 4294967295 (got 4294967296)"),
        ({"faults": [{**THROTTLE, "for": float("nan")}]}, "faults[0].for: must be a finite number"),
        ({"faults": [{**THROTTLE, "for": 1e12}]}, "faults[0].for: must be <= 86400.0"),
        (
            {"faults": [{"kill_worker": {"worker": 1}, "at": {"seconds": float("inf")}}]},
            "faults[0].at.seconds: must be a finite number",
        ),
        (
            {"faults": [KILL], "expect": [{"error": {"class": "A", "within_s": float("inf")}}]},
            "expect[0].error.within_s: must be a finite number",
        ),
        (
            {"faults": [KILL], "expect": [{"exit_code": {"code": 300}}]},
            "expect[0].exit_code.code: must be an exit code 0..255 or nonzero (got 300)",
        ),
    ],
)
def test_numbers_are_finite_and_bounded(data, expected):
    assert expected in problem(**data)


@pytest.mark.parametrize("field", ["description"])
@pytest.mark.parametrize("value", ["   ", "\n\t\n"])
def test_blank_text_is_rejected(field, value):
    assert f"{field}: must not be blank (got {shown(value)})" in problem(**{field: value})


def test_blank_explain_fields_are_rejected():
    message = problem(explain={"symptom": " ", "cause": "c", "fix": "\n"})
    assert "explain.symptom: must not be blank" in message and "explain.fix: must not be blank" in message


# --- error: one class or a list -------------------------------------------------------


def test_error_class_takes_one_class_or_a_list():
    sc = scenario(
        faults=[KILL],
        expect=[
            {"error": {"class": ["UnavailableError", "DeadlineExceededError"]}},
            {"error": {"class": "UnavailableError"}},
        ],
    )
    assert sc.expect[0].classes == ("UnavailableError", "DeadlineExceededError")
    assert sc.expect[1].classes == ("UnavailableError",)
    assert scenario_from_dict(sc.to_dict()) == sc
    assert sc.to_dict()["expect"][0]["error"]["class"] == ["UnavailableError", "DeadlineExceededError"]


@pytest.mark.parametrize(
    "text",
    [
        "UnavailableError|DeadlineExceededError",
        "UnavailableError DeadlineExceededError",
        "UnavailableError, DeadlineExceededError",
    ],
)
def test_several_classes_in_one_text_are_rejected_suggesting_the_list(text):
    message = problem(faults=[KILL], expect=[{"error": {"class": text}}])
    assert "expect[0].error.class: names several classes in one text" in message
    assert "give a list: class: [UnavailableError, DeadlineExceededError]" in message


@pytest.mark.parametrize(
    "value, expected",
    [
        ([], "expect[0].error.class: must name at least one class (got [])"),
        ([1], "expect[0].error.class: must be an exception class name or a list of them (got the number 1)"),
        ("Unavailable-Error", "expect[0].error.class: is not an exception class name (got 'Unavailable-Error')"),
    ],
)
def test_bad_class_values_name_the_field(value, expected):
    assert expected in problem(faults=[KILL], expect=[{"error": {"class": value}}])


# --- checks that could never be judged, or would pass without looking -----------------


@pytest.mark.parametrize("check", ["error", "exit_code"])
def test_an_empty_workers_list_is_rejected(check):
    params = {"class": "A", "workers": []} if check == "error" else {"workers": []}
    assert f"expect[0].{check}.workers: must list at least one item (got [])" in problem(
        faults=[KILL], expect=[{check: params}]
    )


def test_an_empty_workers_list_is_rejected_on_any_check():
    assert "expect[0].slowdown.workers: must list at least one worker" in problem(
        faults=[KILL], expect=[{"slowdown": {"workers": []}}]
    )


def test_restart_none_with_checks_that_need_a_restart_is_rejected():
    message = problem(
        faults=[KILL],
        cluster={"recovery": {"restart": "none", "max_restarts": 0}},
        recover=[{"restored_same_checkpoint": {}}, {"recovered_within": {"max_s": 5}}, {"completed": {}}],
    )
    assert (
        "recover[0].restored_same_checkpoint: needs a restart to be judged, but cluster.recovery.restart is none "
        "and no fault has 'for' or 'until': it could only be unknown"
    ) in message
    assert "recover[1].recovered_within: needs a fault healed during training or a restart" in message
    assert "completed" not in message  # needs nothing


def test_max_restarts_0_counts_as_no_restart():
    assert "recover[0].lost_work: needs a restart to be judged, but cluster.recovery.max_restarts is 0" in problem(
        faults=[KILL], cluster={"recovery": {"max_restarts": 0}}, recover=[{"lost_work": {}}]
    )


def test_a_timed_heal_is_enough_for_checks_that_take_a_heal_but_not_for_those_that_need_a_restart():
    timed = [{**THROTTLE, "for": 5}]
    sc = scenario(
        faults=timed, cluster={"recovery": {"restart": "none", "max_restarts": 0}}, recover=[{"normal_speed": {}}]
    )
    assert sc.recover[0].name == "normal_speed"
    assert "recover[0].resumed_from: needs a restart" in problem(
        faults=timed, cluster={"recovery": {"restart": "none", "max_restarts": 0}}, recover=[{"resumed_from": {}}]
    )


def test_a_fault_that_redeploys_the_workers_mid_training_is_a_restart_whatever_the_policy():
    sc = scenario(
        faults=[{"reused_seed": {}, "at": {"epoch": 1}}],
        cluster={"recovery": {"restart": "none", "max_restarts": 0}},
        recover=[{"restored_same_checkpoint": {}}],
    )
    assert sc.faults[0].fault.applies_at_create


def test_what_checks_need_is_declared_on_the_class():
    for check in [*SYMPTOM_CHECKS, *RECOVERY_CHECKS]:
        assert check.needs <= {"restart", "heal"}, check.name
    assert RECOVERY_CHECKS.get("resumed_from").needs == {"restart"}
    assert RECOVERY_CHECKS.get("completed").needs == frozenset()


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"epoch": 5}, "recover[0].resumed_from.epoch: 5 is past the last epoch (4, 0-based): it can never pass"),
        ({"step": 101}, "recover[0].resumed_from.step: 101 is past the last step (100): it can never pass"),
    ],
)
def test_resume_points_past_the_end_of_training_are_rejected(params, expected):
    assert expected in problem(faults=[KILL], recover=[{"resumed_from": params}])


def test_resume_points_at_the_end_are_fine():
    assert scenario(faults=[KILL], recover=[{"resumed_from": {"epoch": 4, "step": 100}}]).recover[0].epoch == 4


# --- triggers -------------------------------------------------------------------------


def test_a_seconds_trigger_at_or_after_the_total_timeout_is_rejected():
    message = problem(faults=[{"kill_worker": {"worker": 1}, "at": {"seconds": 300}}])
    assert (
        "faults[0].at.seconds: 300 is not before timeouts.total (300 s): the run is stopped before it fires" in message
    )
    message = problem(faults=[{**THROTTLE, "until": {"seconds": 500}}], timeouts={"total": 400})
    assert "faults[0].until.seconds: 500 is not before timeouts.total (400 s): it would never heal" in message


@pytest.mark.parametrize(
    "at, until, expected",
    [
        (
            {"step": 50},
            {"epoch": 1},
            "faults[0].until.epoch: 1 (step 21) is not after at.step 50 (step 50; 20 steps per epoch)",
        ),
        (
            {"epoch": 2},
            {"step": 41},
            "faults[0].until.step: 41 (step 41) is not after at.epoch 2 (step 41; 20 steps per epoch)",
        ),
        ({"seconds": 5}, {"seconds": 3}, "faults[0].until.seconds: 3 is not after at.seconds 5"),
    ],
)
def test_until_before_at_is_rejected_across_units(at, until, expected):
    assert expected in problem(faults=[{"cpu_throttle": {"worker": 1}, "at": at, "until": until}])


def test_until_after_at_across_units_is_fine():
    sc = scenario(faults=[{"cpu_throttle": {"worker": 1}, "at": {"step": 50}, "until": {"epoch": 3}}])
    assert sc.faults[0].until.epoch == 3
    assert scenario(faults=[{"cpu_throttle": {"worker": 1}, "at": {"epoch": 2}, "until": {"step": 42}}]).faults[0].timed


# --- warnings -------------------------------------------------------------------------


def test_a_valid_scenario_has_no_warnings():
    assert scenario(faults=[KILL], recover=[{"completed": {}}]).warnings() == []


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"cluster": {"recovery": {"restart": "none", "max_restarts": 2}}},
            "cluster.recovery.max_restarts: 2 has no effect: restart is none",
        ),
        (
            {"timeouts": {"bring_up": 300, "total": 300}},
            "timeouts.bring_up: 300 s is not less than timeouts.total (300 s)",
        ),
        ({"timeouts": {"symptom": 400}}, "timeouts.symptom: 400 s is not less than timeouts.total (300 s)"),
        (
            {"faults": [{**THROTTLE, "for": 600}]},
            "faults[0].for: 600 s is not less than timeouts.total (300 s): the run is stopped before the heal",
        ),
        (
            {"faults": [KILL], "expect": [{"error": {"class": "A", "within_s": 400}}]},
            "expect[0].error.within_s: 400 s is longer than timeouts.total (300 s)",
        ),
        (
            {"faults": [KILL], "recover": [{"lost_work": {"max_steps": 100}}]},
            "recover[0].lost_work.max_steps: 100 is not less than the whole run (100 steps): the check can never fail",
        ),
        (
            {"faults": [KILL], "recover": [{"completed": {}}, {"completed": None}]},
            "recover[1].completed: the same check as recover[0]",
        ),
    ],
)
def test_legal_but_useless_settings_are_warnings_naming_the_field(data, expected):
    warnings = scenario(**data).warnings()
    assert expected in "\n".join(warnings), warnings


# --- messages -------------------------------------------------------------------------


def test_a_check_without_parameters_says_so():
    message = problem(faults=[KILL], recover=[{"completed": {"x": 1}}])
    assert "recover[0].completed.x: unknown key; completed takes no parameters (write completed: {})" in message
    assert "valid keys: \n" not in message and not message.rstrip().endswith("valid keys:")


def _internal_names() -> set[str]:
    from chaos.scenario import model

    names = {cls.__name__ for registry in (FAULTS, SYMPTOM_CHECKS, RECOVERY_CHECKS) for cls in registry}
    names |= {f"{cls.__name__}{suffix}" for registry in (FAULTS,) for cls in registry for suffix in ("Step",)}
    names |= {f"{cls.__name__}Entry" for registry in (SYMPTOM_CHECKS, RECOVERY_CHECKS) for cls in registry}
    names |= {"Scenario", "ClusterSpec", "TrainingSpec", "RecoveryPolicy", "Timeouts", "Explain", "FaultStep"}
    names |= {"AtStep", "AtEpoch", "AtSeconds", "AtBringUp", "Trigger", "Check", "Fault"}
    assert model.Scenario.__name__ in names
    return names


BAD_VALUES = [None, True, 7, 2.5, "text", [], [1], {}, {"x": 1}]


@pytest.mark.parametrize("value", BAD_VALUES, ids=repr)
@pytest.mark.parametrize(
    "where",
    [
        lambda v: {"cluster": v},
        lambda v: {"cluster": {"training": v}},
        lambda v: {"cluster": {"recovery": {"restart": v}}},
        lambda v: {"explain": v},
        lambda v: {"faults": [v]},
        lambda v: {"faults": [{"kill_worker": v, "at": "bring_up"}]},
        lambda v: {"faults": [{"kill_worker": {"worker": 1}, "at": v}]},
        lambda v: {"faults": [{"kill_worker": {"worker": 1}, "at": "bring_up", "until": v}]},
        lambda v: {"faults": [KILL], "expect": [v]},
        lambda v: {"faults": [KILL], "expect": [{"error": v}]},
        lambda v: {"faults": [KILL], "expect": [{"exit_code": {"code": v}}]},
        lambda v: {"faults": [KILL], "recover": [{"completed": v}]},
        lambda v: {"faults": [KILL], "recover": [{"resumed_from": v}]},
        lambda v: {"timeouts": v},
    ],
)
def test_messages_name_fields_never_internal_class_names(where, value):
    data = where(value)
    try:
        scenario(**data)
    except ScenarioError as exc:
        message = exc.message
    else:
        return  # some values are valid somewhere (e.g. {} for training)
    found = [name for name in _internal_names() if re.search(rf"\b{name}\b", message)]
    assert not found, message
    for line in message.splitlines()[1:] or message.splitlines():
        assert re.match(r"\s*(x\.yaml: )?[a-z_]+(\[\d+\]|\.[a-z_]+)*: ", line), line


def test_whatever_a_file_holds_is_echoed_escaped_and_short():
    from chaos.faults import FAULTS

    message = problem(faults=[{"\x1b[2K\rok: fake" + "x" * 10_000: 1, "at": "bring_up"}])
    # Short: the name is echoed cut, whatever its length; the valid names follow in full.
    assert message.isprintable() and "\\x1b" in message and len(message) < 200 + len(", ".join(FAULTS.names()))
    assert "\u202e" not in problem(**{"\u202eevil": 1}) and "\\u202e" in problem(**{"\u202eevil": 1})


def test_clean_and_shown_bound_their_work():
    assert clean("ok\nfake\x1b[0m") == "ok\\x0afake\\x1b[0m"
    assert len(shown("x" * 10**6)) <= 60 and shown(10**10_000).startswith("<a number of about 10000 digits")
    nested: list = []
    nested.append(nested)
    assert shown(nested) == "[[[[...]]]]"


def test_python_construction_is_validated_the_same_way():
    with pytest.raises(ScenarioError, match=r"recover\[0\].resumed_from: needs a restart"):
        Scenario(
            name="x",
            description="d",
            explain=Explain(**EXPLAIN),
            cluster={"recovery": {"restart": "none"}},
            recover=[RECOVERY_CHECKS.get("resumed_from")()],
        )
    with pytest.raises(ValueError, match="names several classes"):
        ErrorRaised(class_="A|B")
    assert issubclass(ErrorRaised, Check)


# --- tf_config: bad input -----------------------------------------------------------


def tf_config(mode="wrong_port", workers=(1,)):
    return {"tf_config": {"mode": mode, "workers": list(workers)}, "at": "bring_up", "until": {"seconds": 25}}


def test_a_tf_config_worker_out_of_range_names_the_field_and_the_valid_indices():
    message = problem(faults=[tf_config(workers=(2,))])
    assert "faults[0].tf_config.workers: 2 is out of range; valid: 0..1 (cluster.workers is 2)" in message


def test_an_unknown_tf_config_mode_lists_the_valid_modes():
    message = problem(faults=[tf_config(mode="localhost")])
    assert "faults[0].tf_config.mode" in message
    for mode in ("localhost_peers", "set_after_strategy", "unreachable_address"):
        assert mode in message


def test_malformed_is_refused_with_the_simple_resolver_and_the_other_modes_are_not():
    simple = {"training": {"cluster_resolver": "simple"}}
    message = problem(cluster=simple, faults=[tf_config(mode="malformed")])
    assert "faults[0].tf_config.mode: malformed is TF_CONFIG text that is not JSON" in message
    assert "cluster_resolver is simple" in message
    assert scenario(cluster=simple, faults=[tf_config(mode="wrong_port")]).cluster.training.cluster_resolver == "simple"


def test_an_unknown_cluster_resolver_names_the_valid_ones():
    message = problem(cluster={"training": {"cluster_resolver": "k8s"}})
    assert "cluster.training.cluster_resolver" in message and "tf_config" in message and "simple" in message
