"""The catalogue is read from scenario files (their checks under expect: and
the optional signatures: list) and docs/findings.md: a new scenario file is a
new entry with no code change."""

from __future__ import annotations

import pytest

from chaos.checks.verdict import Status
from chaos.diagnose import build, diagnose_logs
from chaos.diagnose.catalogue import findings_sections, signatures_of
from chaos.diagnose.logs import DiagnoseError, WorkerLog
from chaos.diagnose.signatures import ErrorSignature, ExitSignature, HangSignature, PatternSignature
from chaos.errors import ScenarioError
from chaos.resources import builtin_scenarios_dir
from chaos.scenario.loader import load_scenario

UNKNOWN = Status.UNKNOWN

SCENARIO = """\
name: {name}
description: a worker's disk fills up
explain: {{symptom: "OSError: No space left on device", cause: a full disk, fix: clean it}}
faults:
  - kill_worker: {{worker: 1}}
    at: {{epoch: 1}}
expect:
  - error: {{class: [OSError, IOError], message: "No space left", workers: [1]}}
  - exit_code: {{workers: [1], code: 1}}
{extra}"""


def write(tmp_path, name="disk-full-kills-worker", extra=""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(SCENARIO.format(name=name, extra=extra))
    return path


def test_signatures_come_from_the_checks_and_the_signatures_list(tmp_path):
    extra = 'signatures:\n  - pattern: "ENOSPC"\n    why: the errno of a full disk\n'
    scenario = load_scenario(write(tmp_path, extra=extra))
    assert signatures_of(scenario) == (
        ErrorSignature(("OSError", "IOError"), "No space left", (1,)),
        ExitSignature(1, None, (1,)),
        PatternSignature("ENOSPC", "the errno of a full disk"),
    )


def test_a_new_scenario_file_is_diagnosed_with_no_code_change(tmp_path):
    write(tmp_path)
    entries, notes = build([tmp_path], None)
    logs = [
        WorkerLog(
            "worker-1",
            "w1.log",
            ("OSError: [Errno 28] No space left on device", "command terminated with exit code 1"),
            (1, 2),
        )
    ]
    _, ranked = diagnose_logs(logs, entries)
    assert notes == [] and [m.entry.name for m in ranked] == ["disk-full-kills-worker"]
    assert ranked[0].entry.command == f"chaos run {tmp_path / 'disk-full-kills-worker.yaml'}"


def test_hang_check_carries_the_missing_tasks(tmp_path):
    path = tmp_path / "h.yaml"
    path.write_text(
        "name: h\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\n"
        "faults:\n  - tf_config: {mode: localhost_peers, workers: [1]}\n    at: bring_up\n    until: {seconds: 25}\n"
        "expect:\n  - hang_at_bring_up: {min_s: 15, missing: [1]}\n"
    )
    assert signatures_of(load_scenario(path)) == (HangSignature(15, (1,)),)


def test_a_bad_signature_pattern_is_a_scenario_error_naming_the_field(tmp_path):
    path = write(tmp_path, extra='signatures:\n  - pattern: "(unclosed"\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    text = info.value.render()
    assert "signatures[0].pattern" in text and "not a valid regular expression" in text


def test_an_unknown_signature_key_is_refused(tmp_path):
    path = write(tmp_path, extra='signatures:\n  - patern: "x"\n')
    with pytest.raises(ScenarioError, match="patern"):
        load_scenario(path)


def test_a_bad_scenario_file_is_left_out_with_a_note(tmp_path):
    write(tmp_path)
    (tmp_path / "broken.yaml").write_text("name: broken\n")
    entries, notes = build([tmp_path], None)
    assert [e.name for e in entries] == ["disk-full-kills-worker"] and len(notes) == 1 and "broken" in notes[0]


def test_no_scenario_at_all_is_a_diagnose_error(tmp_path):
    (tmp_path / "broken.yaml").write_text("name: broken\n")
    with pytest.raises(DiagnoseError, match="no scenario to match against"):
        build([tmp_path], None)


def test_findings_sections_that_name_a_scenario_are_cited(tmp_path):
    write(tmp_path)
    findings = tmp_path / "findings.md"
    findings.write_text(
        "# Findings\n\n## Disks\nMeasured with `disk-full-...`: OSError after 3 s.\n\n"
        "## Other\nNothing about `scenarios/tf-config-*.yaml` here.\n\n## Globbed\nSee `scenarios/disk-*.yaml`.\n"
    )
    entries, _ = build([tmp_path], findings)
    assert [m.split(" § ")[1] for m in entries[0].measured] == ["Disks", "Globbed"]
    assert findings_sections(findings.read_text())[0][0] == "Disks"


def test_the_shipped_catalogue_loads_and_every_diagnosable_entry_has_a_strong_signature(tmp_path):
    from chaos.diagnose.catalogue import default_findings, default_scenarios

    entries, notes = build([default_scenarios()], default_findings())
    assert notes == [] and len(entries) >= 20
    for e in entries:
        if e.diagnosable:
            assert any(s.positive and s.weight >= 1.5 for s in e.signatures), e.name


def test_symptoms_no_log_can_show_are_named_and_the_selfcheck_does_not_judge_them():
    from chaos.diagnose import build
    from chaos.diagnose.selfcheck import verdict

    entries, _ = build([builtin_scenarios_dir()], None)
    by_name = {e.name: e for e in entries}
    assert by_name["tf-config-set-after-strategy-trains-apart-silently"].unseen == ("weights_diverged",)
    # slow storage applies at create: its containers have no fault-free "before"
    assert by_name["slow-checkpoint-storage-stretches-every-save-then-recovers"].unseen == ("slowdown",)
    # a throttle injected mid-run is seen in the log
    assert by_name["cpu-throttled-worker-slows-every-worker"].unseen == ()
    judged, _ = verdict("tf-config-set-after-strategy-trains-apart-silently", [], entries)
    assert judged.status is UNKNOWN and judged.reason.startswith("not judged: weights_diverged")
    # a custom loop's counters are the agent's reading at each save and restore, in no log a user has
    # (the on-read count's run diagnosed as killed-worker-recovers: its only other symptom, the kill)
    count = "killed-worker-restores-a-count-kept-on-read-short-by-its-remainder"
    assert by_name[count].unseen == ("job_counters_changed_by_restore",)
    assert by_name["count-in-a-plain-variable-differs-per-worker-until-aggregated-with-sum"].unseen == (
        "job_counters_differ",
    )
    assert verdict(count, [], entries)[0].status is Status.UNKNOWN
