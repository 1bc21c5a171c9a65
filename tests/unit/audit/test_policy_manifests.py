"""The failure policy's manifests (chaos.audit.policy_yaml), validated offline
(chaos.audit.policy_check: kubernetes-validate's schema, the API server's podFailurePolicy rules,
JobSet's fields, the Compose schema), and shown to fail validation when broken. No cluster."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest
import yaml
from audit_reports import killed_worker_report, preempted_report, reference_report, silent_report
from test_policy import unrecovered_report

from chaos.audit import policy_check, policy_yaml
from chaos.audit.battery import EMPTY_CHECKPOINT, KILLED_WORKER, PEER_PAUSED, PREEMPTION, REFERENCE
from chaos.audit.card import Assumptions, build_card
from chaos.audit.measure import measure
from chaos.audit.policy import derive
from chaos.audit.render_html import page
from chaos.audit.render_text import markdown
from chaos.audit.run import with_policy_check

TARGET = policy_yaml.Target(
    name="mnist",
    workers=4,
    image="acme/trainer:2.4",
    command=("python", "train.py", "--epochs", "5"),
    checkpoint_dir="/ckpt",
)


def measured():
    return [
        measure(REFERENCE, reference_report(), 40),
        measure(KILLED_WORKER, killed_worker_report(), 30),
        measure(PEER_PAUSED, silent_report(10.0), 40),
        measure(PREEMPTION, preempted_report(0.5), 40),
        measure(EMPTY_CHECKPOINT, unrecovered_report(), 40),
    ]


@pytest.fixture(scope="module")
def policy():
    return derive(measured())


def test_the_job_carries_the_measured_policy_and_validates(policy):
    job = policy_yaml.job(policy, TARGET)
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0] == {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert rules[1] == {
        "action": "FailJob",
        "onExitCodes": {"containerName": "trainer", "operator": "In", "values": [3]},
    }
    assert rules[2]["action"] == "Count" and rules[2]["onExitCodes"]["values"] == [1, 42, 137]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] == 4 * policy.retries  # one failure fails every MWMS peer
    assert policy_check.job_problems(job) == []
    spec = job["spec"]["template"]["spec"]
    assert spec["subdomain"] == TARGET.name and spec["containers"][0]["command"][2].endswith(
        "exec python train.py --epochs 5"
    )
    service = policy_yaml.job_service(TARGET)
    assert service["spec"]["clusterIP"] == "None" and policy_check.schema_problems(service) == []


def test_the_jobset_restarts_every_worker_and_fails_on_the_unfixed_codes(policy):
    js = policy_yaml.jobset(policy, TARGET)
    fp = js["spec"]["failurePolicy"]
    assert fp["maxRestarts"] == policy.retries
    assert [(r["action"], r["onJobFailureReasons"]) for r in fp["rules"]] == [
        ("FailJobSet", ["PodFailurePolicy"]),
        ("RestartJobSet", ["BackoffLimitExceeded"]),
    ]
    template = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert template["backoffLimit"] == 0 and template["completionMode"] == "Indexed"
    assert template["template"]["spec"]["restartPolicy"] == "Never"  # JobSet would default OnFailure
    assert policy_check.jobset_problems(js) == []


def test_the_compose_settings_say_the_same_and_validate(policy):
    doc = policy_yaml.compose(policy, TARGET)
    service = doc["services"]["worker-0"]
    assert service["restart"] == f"on-failure:{policy.retries}"
    assert service["deploy"]["restart_policy"] == {"condition": "on-failure", "max_attempts": policy.retries}
    assert policy_check.compose_problems(doc) == []
    assert "3, which a restart did not fix, is retried 3 times too" in policy_yaml.compose_note(policy)


def test_the_yaml_reads_back_as_the_manifests(policy):
    docs = policy_yaml.documents(policy, TARGET)
    assert list(yaml.safe_load_all(docs["job"])) == [policy_yaml.job_service(TARGET), policy_yaml.job(policy, TARGET)]
    assert yaml.safe_load(docs["jobset"]) == policy_yaml.jobset(policy, TARGET)
    assert yaml.safe_load(docs["compose"]) == policy_yaml.compose(policy, TARGET)
    assert "status: 'True'" in docs["job"]  # a string, not YAML's true


def _job(policy):
    return copy.deepcopy(policy_yaml.job(policy, TARGET))


def test_exit_code_0_in_an_in_rule_is_refused(policy):
    job = _job(policy)
    job["spec"]["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"] = [0, 3]
    # The schema lets it through (it has no such rule): the API server's rule catches it.
    assert policy_check.schema_problems(job) == []
    assert policy_check.job_problems(job) == [
        "spec.podFailurePolicy.rules[1].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator"
    ]


def test_restart_policy_on_failure_is_refused(policy):
    job = _job(policy)
    job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    problems = policy_check.job_problems(job)
    assert problems == [
        "spec.template.spec.restartPolicy: Invalid value: 'OnFailure': only \"Never\" is supported "
        "when podFailurePolicy is specified"
    ]


def test_unordered_values_both_requirements_and_an_unknown_action_are_refused(policy):
    job = _job(policy)
    rules = job["spec"]["podFailurePolicy"]["rules"]
    rules[2]["onExitCodes"]["values"] = [137, 1]
    rules[0]["onExitCodes"] = {"operator": "NotIn", "values": [1]}
    rules.append({"action": "Retry", "onExitCodes": {"operator": "In", "values": [2], "containerName": "main"}})
    text = "\n".join(policy_check.job_problems(job))
    assert "rules[2].onExitCodes.values: Invalid value: [137, 1]: must be ordered" in text
    assert "rules[0]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported" in text
    assert "rules[3].action: Unsupported value: 'Retry'" in text
    assert "rules[3].onExitCodes.containerName: Invalid value: 'main'" in text


def test_the_schema_refuses_a_misspelt_field_and_a_wrong_type(policy):
    job = _job(policy)
    job["spec"]["podFailurePolicy"]["rules"][1]["onExitCode"] = job["spec"]["podFailurePolicy"]["rules"][1].pop(
        "onExitCodes"
    )
    problems = policy_check.schema_problems(job)
    assert len(problems) == 1 and "kubernetes-validate" not in problems[0] and "onExitCode" in problems[0]
    job = _job(policy)
    job["spec"]["backoffLimit"] = "three"
    assert "backoffLimit" in policy_check.schema_problems(job)[0]


def test_a_broken_jobset_is_refused(policy):
    js = copy.deepcopy(policy_yaml.jobset(policy, TARGET))
    js["spec"]["failurePolicy"]["rules"][0]["action"] = "FailJob"
    js["spec"]["failurePolicy"]["rules"][1]["onJobFailureReasons"] = ["OOMKilled"]
    pod_rules = js["spec"]["replicatedJobs"][0]["template"]["spec"]["podFailurePolicy"]["rules"]
    del pod_rules[0]["onPodConditions"][0]["status"]  # nothing defaults it inside a JobSet
    text = "\n".join(policy_check.jobset_problems(js))
    assert "rules[0].action: 'FailJob': supported values: FailJobSet" in text
    assert "'OOMKilled': valid reasons" in text
    assert "onPodConditions[0].status: Required value" in text


def test_a_broken_compose_snippet_is_refused(policy):
    doc = copy.deepcopy(policy_yaml.compose(policy, TARGET))
    doc["services"]["worker-0"]["deploy"]["restart_policy"]["condition"] = "sometimes"
    doc["services"]["worker-0"]["restart"] = "on-failure=3"
    doc["services"]["worker-0"]["deploy"]["restart_policy"]["max_attempt"] = 3
    text = "\n".join(policy_check.compose_problems(doc))
    assert "compose schema: services.worker-0.deploy.restart_policy: 'max_attempt' does not match" in text
    assert "restart: 'on-failure=3'" in text and "condition: 'sometimes'" in text


def test_the_tf_config_snippet_gives_each_pod_its_index_and_the_headless_names():
    snippet = policy_yaml.tf_config_snippet(TARGET)
    for index in (0, 3):
        out = subprocess.run(
            ["sh", "-c", snippet + '\nprintf %s "$TF_CONFIG"'],
            capture_output=True,
            text=True,
            env={"PATH": os.environ["PATH"], "JOB_COMPLETION_INDEX": str(index)},
            check=True,
        ).stdout
        assert json.loads(out) == policy_yaml.tf_config_for(TARGET, index)
    assert policy_yaml.worker_hosts(TARGET)[2] == "mnist-worker-0-2.mnist:2222"
    # A plain Indexed Job: <job>-<index> under its headless Service (subdomain), the same way.
    job_snippet = policy_yaml.tf_config_snippet(TARGET, policy_yaml.JOB)
    out = subprocess.run(
        ["sh", "-c", job_snippet + '\nprintf %s "$TF_CONFIG"'],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "JOB_COMPLETION_INDEX": "2"},
        check=True,
    ).stdout
    assert json.loads(out)["cluster"]["worker"][3] == "mnist-3.mnist:2222" and json.loads(out)["task"]["index"] == 2
    missing = subprocess.run(["sh", "-c", snippet], capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
    assert missing.returncode != 0 and "not an Indexed Job pod" in missing.stderr


def test_names_become_dns_labels():
    assert policy_yaml.dns_label("My_Job.v2") == "my-job-v2"
    assert policy_yaml.dns_label("2fast") == "fast"
    assert policy_yaml.dns_label("___") == "tf-train"


def test_the_card_prints_the_policy_and_that_it_validated():
    card = with_policy_check(
        build_card(measured(), Assumptions(24, 4), workload="w.yaml", battery="full", target=TARGET)
    )
    assert card.policy_check.endswith(": valid") and "kubernetes-validate" in card.policy_check
    md = markdown(card)
    assert "## Failure policy: which exits a restart fixed" in md
    assert "| killed worker (SIGKILL worker-1) | crash | 1, 137 (SIGKILL) | - | recovered | retry |" in md
    assert "Fail the job (FailJob, FailJobSet): exit code 3." in md
    assert "kind: JobSet" in md and "export TF_CONFIG=" in md and "restart: on-failure:3" in md
    html = page(card)
    assert 'id="failure-policy"' in html and 'id="policy-exits"' in html and "podFailurePolicy:" in html
    assert card.to_dict_json()["failure_policy"]["not_fixed"] == [3]


def test_a_policy_that_fails_validation_says_so_on_the_card(monkeypatch):
    card = build_card(measured(), Assumptions(24, 4), workload="w.yaml", battery="full", target=TARGET)
    monkeypatch.setattr(
        policy_yaml,
        "pod_failure_policy",
        lambda p, t: {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0]}}]},
    )
    checked = with_policy_check(card)
    assert "INVALID" in checked.policy_check and "must not be 0 for the In operator" in checked.policy_check


def test_without_the_schema_package_the_card_says_not_validated(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_package(name, *args, **kw):
        if name.startswith("kubernetes_validate"):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_package)
    card = with_policy_check(
        build_card(measured(), Assumptions(24, 4), workload="w.yaml", battery="full", target=TARGET)
    )
    assert card.policy_check == "not validated: kubernetes-validate is not installed (pip install 'tfchaos[test]')"
