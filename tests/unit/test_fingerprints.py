"""chaos.fingerprints: which worker differs from which, in what; and the
worker's fingerprint itself (package names normalized)."""

from types import SimpleNamespace

import pytest

from chaos.events import StartEvent
from chaos.fingerprints import ABSENT, Skew, diff, fingerprint_of, skews
from chaos.worker import fingerprint as worker_fingerprint


def start(worker, tf="2.20", **fp):
    return StartEvent(t=1.0, source=f"worker-{worker}", tf_version=tf, fingerprint=fp)


# --- diff ------------------------------------------------------------------------


def test_diff_lists_changed_added_and_removed_keys_only():
    mine = {"a": "1", "b": "2", "only_mine": "x"}
    theirs = {"a": "1", "b": "3", "only_theirs": "y"}
    assert diff(mine, theirs) == {"b": ("2", "3"), "only_mine": ("x", ABSENT), "only_theirs": (ABSENT, "y")}
    assert list(diff(mine, theirs)) == sorted(diff(mine, theirs))
    assert diff(mine, dict(mine)) == {}


def test_fingerprint_of_adds_the_tf_version():
    assert fingerprint_of(start(1, tf="2.15", python="3.11")) == {"tf_version": "2.15", "python": "3.11"}


# --- skews -----------------------------------------------------------------------


def test_skews_compare_with_the_lowest_index_by_default():
    starts = {2: start(2, python="3.12"), 1: start(1, python="3.11"), 3: start(3, python="3.11")}
    found = skews(starts)
    assert [(s.worker, s.baseline) for s in found] == [(2, 1)]
    assert found[0].diffs == {"python": ("3.12", "3.11")}


def test_skews_with_an_explicit_baseline_and_nothing_to_report():
    starts = {0: start(0, tf="2.15"), 1: start(1), 2: start(2)}
    assert [(s.worker, s.baseline) for s in skews(starts, baseline=1)] == [(0, 1)]
    assert [(s.worker, s.baseline) for s in skews(starts)] == [(1, 0), (2, 0)]
    assert skews({0: start(0), 1: start(1)}) == []
    assert skews({}) == []
    assert skews({0: start(0)}) == []


# --- describe --------------------------------------------------------------------


def test_describe_puts_what_an_engineer_asks_first_first():
    skew = Skew(
        worker=1,
        baseline=0,
        diffs={
            "platform": ("b", "a"),
            "env:LD_LIBRARY_PATH": ("/x", ABSENT),
            "pkg:numpy": ("2.0", "1.26"),
            "python": ("3.12", "3.11"),
            "pkg:keras": ("3.1", "3.0"),
            "pkg:tensorflow-cpu": ("2.15.1", "2.20.0"),
            "tf_version": ("2.15", "2.20"),
        },
    )
    text = skew.describe(limit=10)
    assert text.startswith(
        "worker-1 differs from worker-0 in tf_version: 2.15 vs 2.20; pkg:tensorflow-cpu: 2.15.1 vs 2.20.0"
    )
    order = [
        k
        for k in (
            "tf_version",
            "pkg:tensorflow-cpu",
            "pkg:keras",
            "python",
            "env:LD_LIBRARY_PATH",
            "pkg:numpy",
            "platform",
        )
        if k in text
    ]
    assert sorted(order, key=text.index) == order
    assert "more" not in text


def test_describe_truncates_after_the_limit_and_says_how_many_more():
    diffs = {f"pkg:p{i:02d}": ("1", "2") for i in range(10)}
    diffs["tf_version"] = ("2.15", "2.20")
    text = Skew(1, 0, diffs).describe(limit=3)
    assert text.endswith("; and 8 more")
    assert "tf_version: 2.15 vs 2.20; pkg:p00: 1 vs 2; pkg:p01: 1 vs 2; and" in text
    assert "pkg:p02" not in text
    exactly = Skew(1, 0, {f"k{i}": ("1", "2") for i in range(6)}).describe()
    assert "more" not in exactly and "k5" in exactly
    one_over = Skew(1, 0, {f"k{i}": ("1", "2") for i in range(7)}).describe()
    assert one_over.endswith("k5: 1 vs 2; and 1 more") and "k6" not in one_over


# --- the worker's fingerprint ---------------------------------------------------


def fake_dist(name, version):
    return SimpleNamespace(metadata={"Name": name}, version=version)


def test_worker_fingerprint_normalizes_package_names_and_keeps_tf_relevant_env(monkeypatch):
    dists = [fake_dist("TensorFlow_CPU", "2.20.0"), fake_dist("zope.interface", "6.0"), fake_dist("", "0")]
    monkeypatch.setattr(worker_fingerprint.metadata, "distributions", lambda: dists)
    fp = worker_fingerprint.environment_fingerprint(
        {"TF_CONFIG": "{}", "TF_CPP_MIN_LOG_LEVEL": "2", "LD_LIBRARY_PATH": "/x", "HOME": "/root"}
    )
    assert fp["pkg:tensorflow-cpu"] == "2.20.0"
    assert fp["pkg:zope-interface"] == "6.0"
    assert not any(k == "pkg:" or "_" in k.split(":", 1)[1] for k in fp if k.startswith("pkg:"))
    assert fp["env:TF_CPP_MIN_LOG_LEVEL"] == "2" and fp["env:LD_LIBRARY_PATH"] == "/x"
    assert "env:TF_CONFIG" not in fp and "env:HOME" not in fp  # per-worker by design / irrelevant
    assert {"python", "platform", "libc"} <= set(fp)


@pytest.mark.parametrize("spelling", ["tensorflow_cpu", "Tensorflow.CPU", "tensorflow__cpu"])
def test_one_package_spelled_differently_on_two_workers_is_no_skew(monkeypatch, spelling):
    def fingerprint(name):
        monkeypatch.setattr(worker_fingerprint.metadata, "distributions", lambda: [fake_dist(name, "2.20.0")])
        return worker_fingerprint.environment_fingerprint({})

    reference, other = fingerprint("tensorflow-cpu"), fingerprint(spelling)
    assert reference["pkg:tensorflow-cpu"] == "2.20.0"
    assert skews({0: start(0, **reference), 1: start(1, **other)}) == []
    # and a real version difference in it is still seen
    bumped = {**other, "pkg:tensorflow-cpu": "2.18.0"}
    assert skews({0: start(0, **reference), 1: start(1, **bumped)})[0].diffs == {
        "pkg:tensorflow-cpu": ("2.18.0", "2.20.0")
    }
