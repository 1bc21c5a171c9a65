"""`chaos diagnose`: exit 0 with a match, 1 with none, 2 for bad input, which
is one `error:` line and a hint, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.cli import main

LOGS = Path(__file__).parent / "logs"


def run(capsys, *args):
    code = main(["diagnose", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_match_prints_evidence_explanation_and_the_reproduce_command(capsys):
    code, out, _ = run(capsys, LOGS / "host-oom-kills-worker-then-recovers")
    assert code == 0
    first = out.split("\n2. ")[0]
    assert "1. host-oom-kills-worker-then-recovers" in first
    assert "exited 137 (OOM-killed)" in first and "worker-1.log:" in first
    assert "cause:" in first and "fix:" in first
    assert "reproduce: chaos run scenarios/host-oom-kills-worker-then-recovers.yaml" in first


def test_top_limits_the_failures_shown(capsys):
    _, out, _ = run(capsys, LOGS / "killed-worker-recovers-from-checkpoint", "--top", "1")
    assert "\n1. " in out and "\n2. " not in out and "also matching, less likely:" in out


def test_no_match_exits_1(capsys, tmp_path):
    (tmp_path / "w.log").write_text("Epoch 1/1\nRuntimeError: my own bug\n")
    code, out, _ = run(capsys, tmp_path / "w.log")
    assert code == 1 and "no failure in the catalogue matches" in out and "RuntimeError: my own bug" in out


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda p: p / "missing.log", "missing.log: no such file or folder"),
        (lambda p: p, "holds no files"),
        (lambda p: (p / "x.bin").write_bytes(b"\x00\xff") and p / "x.bin", "x.bin: not a text log"),
    ],
)
def test_bad_input_is_one_error_and_a_hint_exit_2(capsys, tmp_path, make, expected):
    code, out, err = run(capsys, make(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and expected in err and "\nhint: " in err and "Traceback" not in err


def test_bad_top_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["diagnose", "x.log", "--top", "0"])
    assert info.value.code == 2 and "must be a whole number from 1 to 50" in capsys.readouterr().err


def test_scenarios_option_sets_the_catalogue(capsys, tmp_path):
    code, out, err = run(capsys, LOGS / "killed-worker-recovers-from-checkpoint", "--scenarios", tmp_path)
    assert code == 2 and "no scenario to match against" in err


def test_a_missing_findings_file_is_an_error(capsys, tmp_path):
    code, _, err = run(capsys, LOGS / "killed-worker-recovers-from-checkpoint", "--findings", tmp_path / "nope.md")
    assert code == 2 and "--findings" in err and "nope.md: no such file" in err and "hint:" in err


def test_no_confident_match_exits_1_with_the_candidates(capsys, tmp_path):
    """A task whose port is taken (dev-2 case tf-3517): another process on the
    machine, or two tasks of one cluster given the same host and port, which a
    port that cannot be reached and a TF_CONFIG mistake explain alike: no
    guess, the candidates and the lines worth a look."""
    (tmp_path / "w.log").write_text(
        "E0727 11:38:35.762428930   22857 tcp_server_posix.c:284]     bind addr=[::]:2223: Address already in use\n"
        "E0727 11:38:35.762761220   22857 server_chttp2.c:119]        No address added out of total 1 resolved\n"
    )
    code, out, _ = run(capsys, tmp_path / "w.log")
    assert code == 1 and "no confident match: these logs fit" in out
    assert "the candidates, equally likely" in out and "Address already in use" in out
