"""``chaos audit`` on the example's Keras fit job (examples/keras-mwms), a weak
variant beside the tutorial's: ``--reshuffle`` (the tutorial's
``shuffle().repeat()``-style pipeline, reshuffled every epoch) makes a resumed
run see other batches than an uninterrupted one. The weak card must carry the
not-bit-exact finding with the measured drift, the other must not, and the
other must grade higher. Both audits run at once (quick battery), a few
minutes on a 2-core machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "keras-mwms"
COMMAND = ["python", "train_fit.py", "--epochs", "5", "--steps-per-epoch", "60", "--verbose", "0"]


def workload(tmp: Path, name: str, extra: list[str]) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "build": {"context": str(EXAMPLE), "dockerfile": "Dockerfile"},
                "command": COMMAND + extra,
                "checkpoint_dir": "/checkpoints",
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def cards(images, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit-example")
    variants = {"tutorial": [], "reshuffled": ["--reshuffle"]}
    procs = {}
    for name, extra in variants.items():
        procs[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "chaos",
                "audit",
                "--workload",
                str(workload(tmp, name, extra)),
                "--battery",
                "quick",
                "-j",
                "2",
                "--report-dir",
                str(tmp / name),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=1200)
        print(f"--- {name} (exit {proc.returncode})\n{stdout[-5000:]}\n{stderr[-2000:]}")
        assert proc.returncode == 0, stderr[-3000:]
        out[name] = json.loads((tmp / name / "card.json").read_text())
    return out


def finding(card, id):
    return next(f for f in card["findings"] if f["id"] == id)


def test_the_reshuffled_job_gets_the_drift_finding_and_the_tutorial_job_does_not(cards):
    weak, good = finding(cards["reshuffled"], "not-bit-exact"), finding(cards["tutorial"], "not-bit-exact")
    assert weak["status"] == "finding" and "differ from the uninterrupted run" in weak["measured"]
    assert "enable_op_determinism" in weak["setting"]
    assert good["status"] == "ok"


# Criteria that compare a measured time with a threshold (detection's slow-detection
# and slow-exit): on a loaded 2-core machine they flip either card from run to run
# (seen in a CI rehearsal: the overall grades came out equal), so the comparison is
# made without them. Every other criterion is judged from the runs' verdicts.
TIMED = {"slow-detection", "slow-exit"}


def untimed_score(card) -> float:
    judged = [f for f in card["findings"] if f["id"] not in TIMED and f["status"] in ("ok", "finding")]
    return sum(f["status"] == "ok" for f in judged) / len(judged)


def test_the_tutorial_job_grades_higher(cards):
    weak, good = cards["reshuffled"], cards["tutorial"]
    recovery = {name: next(g for g in card["grades"] if g["area"] == "recovery") for name, card in cards.items()}
    assert recovery["tutorial"]["score"] > recovery["reshuffled"]["score"], recovery
    assert untimed_score(good) > untimed_score(weak), (good["grades"][-1], weak["grades"][-1])


def test_the_job_s_own_figures_feed_its_card(cards):
    for card in cards.values():
        model = card["model"]
        assert model["interval_steps"] == 60  # BackupAndRestore's epoch saves, from the job's plan event
        assert model["save_s"]["value"] is not None and "uninterrupted run" in model["save_s"]["note"]
        assert finding(card, "backup-not-shared")["status"] == "ok"  # /checkpoints, the shared volume


def test_each_card_prints_a_failure_policy_that_validates(cards):
    """Issue 40 item 4: the exit codes the battery saw, which a restart fixed, as manifests that
    pass the offline validation (kubernetes-validate's schema and the API server's rules)."""
    for name, card in cards.items():
        policy = card["failure_policy"]
        assert policy["validation"].endswith(": valid"), (name, policy["validation"])
        assert 137 in policy["retryable"], (name, policy)  # the killed worker's SIGKILL, recovered
        killed = next(f for f in policy["faults"] if f["key"] == "killed-worker")
        assert killed["outcome"] == "recovered" and 137 in killed["codes"]
