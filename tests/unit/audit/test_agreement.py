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
