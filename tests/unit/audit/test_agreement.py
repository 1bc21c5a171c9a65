import json

import pytest

from chaos.audit.agreement import Row, compare, figures, read_card, table
from chaos.errors import ScenarioError


def card(step=0.01, save=0.05, detect=None):
    return {
        "model": {"step_time_s": {"value": step}, "save_s": {"value": save}, "restart_s": {"value": 3.0},
                  "detect_s": {"value": 1.0}},
        "runs": [{"key": "reference", "kind": "reference", "detect_s": {"value": None}},
                 {"key": "killed-worker", "kind": "crash", "detect_s": {"value": detect}, "restart_s": {"value": 3.0},
                  "detection": {"worker-0": {"value": 0.1}}}],
    }


@pytest.mark.parametrize("a, b, relative, agrees", [
    (1.0, 1.1, 0.1 / 1.1, True), (1.0, 1.3, 0.3 / 1.3, False), (0.0, 0.0, 0.0, True), (None, 1.0, None, None),
])
def test_relative_difference_is_symmetric_and_absent_is_not_agreement(a, b, relative, agrees):
    row = Row("x", a, b)
    assert row.relative == (pytest.approx(relative) if relative is not None else None)
    assert row.agrees() is agrees and Row("x", b, a).agrees() is agrees


def test_compare_lists_every_figure_of_either_card():
    rows = {r.figure: r for r in compare(card(save=0.05, detect=0.3), card(save=0.08, detect=None))}
    assert rows["model save_s"].agrees() is False and rows["model step_time_s"].agrees() is True
    assert rows["killed-worker detect_s"].agrees() is None
    assert "killed-worker detection worker-0" in figures(card())
    assert not any(name.startswith("reference") for name in figures(card()))
    text = table(list(rows.values()))
    assert "NO" in text and "not comparable" in text and "comparable figures within 20%" in text


def test_a_file_that_is_not_a_card_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ScenarioError, match="is not a card"):
        read_card(bad)
    with pytest.raises(ScenarioError, match="cannot read a card"):
        read_card(tmp_path / "missing.json")


def test_a_fault_run_several_times_compares_by_its_median_under_the_entry_s_name():
    three = card()
    three["runs"] = [three["runs"][0]] + [
        {"key": key, "kind": "crash", "detect_s": {"value": d}, "restart_s": {"value": 3.0},
         "detection": {"worker-0": {"value": d}}}
        for key, d in (("partition", 9.0), ("partition#2", 21.0), ("partition#3", None), ("partition#4", 10.0))]
    got = figures(three)
    assert got["partition detect_s"] == 10.0  # the median of the known 9, 21, 10; the unmeasured one is left out
    assert not any("#" in name for name in got)
    one = card()
    one["runs"] = [one["runs"][0], {"key": "partition", "kind": "crash", "detect_s": {"value": 11.5},
                                    "restart_s": {"value": 3.0}, "detection": {}}]
    row = {r.figure: r for r in compare(three, one)}["partition detect_s"]
    assert row.agrees() is True and row.a == 10.0 and row.b == 11.5
