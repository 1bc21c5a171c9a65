import argparse

from chaos.scenario import cli


def run(argv):
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def test_list_shows_faults_checks_params_and_scenarios(capsys):
    assert run(["list"]) == 0
    out = capsys.readouterr().out
    assert "kill_worker" in out and "signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'" in out
    assert "matches_uninterrupted" in out and "planned:" not in out
    for name in (
        "version_skew",
        "reused_seed",
        "device_oom",
        "host_oom",
        "cpu_throttle",
        "environment_skew",
        "no_error",
    ):
        assert f"\n  {name} " in out, name
    assert "cpus: float = 0.1" in out
    assert "killed-worker-recovers-from-checkpoint.yaml" in out and "symptom:" in out


def test_validate_all_scenarios_exits_0(capsys):
    assert run(["validate"]) == 0
    assert " valid, 0 invalid" in capsys.readouterr().out


def test_validate_reports_bad_files_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\nfaults: [{latncy: {worker: 1}, at: bring_up}]\n"
    )
    assert run(["validate", str(bad)]) == 2
    out = capsys.readouterr().out
    assert "did you mean 'latency'?" in out and "0 valid, 1 invalid" in out
