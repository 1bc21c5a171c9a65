import math

import pytest

from chaos.audit import model
from chaos.audit.model import Costs, ModelError


@pytest.mark.parametrize(
    "save_s, mtbf_s, expected",
    [
        (10, 24 * 3600, math.sqrt(2 * 10 * 86400)),  # 1314.53 s: the example
        (10, 24 * 3600, 1314.534138),
        (1, 3600, 84.852814),
        (0.05, 1350, 11.61895),  # C = 50 ms, 64 nodes of 24 h MTBF
    ],
)
def test_young_interval(save_s, mtbf_s, expected):
    assert model.young_interval(save_s, mtbf_s) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    "save_s, mtbf_s, restart_s, expected",
    [
        (10, 86400, 0, 1314.534138 - 10),  # no restart cost: Young's minus C
        (10, 86400, 600, math.sqrt(2 * 10 * (86400 + 600)) - 10),  # 1309.09 s
        (100, 40, 5, 40),  # C >= 2M: checkpointing cannot pay, Daly gives M
    ],
)
def test_daly_interval(save_s, mtbf_s, restart_s, expected):
    assert model.daly_interval(save_s, mtbf_s, restart_s) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("hours, nodes, expected", [(24, 1, 86400), (24, 64, 1350), (1, 4, 900)])
def test_job_mtbf(hours, nodes, expected):
    assert model.job_mtbf_s(hours, nodes) == pytest.approx(expected)


def test_goodput_known_values():
    g = model.goodput(Costs(save_s=10, restart_s=60, detect_s=30, interval_s=1000), 86400)
    assert g.save_overhead == pytest.approx(10 / 1010)
    assert g.per_failure_s == pytest.approx(30 + 60 + 1010 / 2)  # D + R + (tau + C)/2 = 595
    assert g.failure_loss == pytest.approx(595 / 86400)
    assert g.ettr == pytest.approx((1000 / 1010) * (1 - 595 / 86400))  # 0.983281
    assert g.ettr == pytest.approx(0.983281, abs=1e-6)


def test_goodput_is_zero_when_failures_outpace_recovery():
    assert model.goodput(Costs(1, 100, 100, 10), 50).ettr == 0


@pytest.mark.parametrize("factor, limit", [(1, 1.0), (2, 1.25), (0.5, 1.25)])
def test_waste_ratio_of_an_interval_off_the_optimum(factor, limit):
    costs = Costs(10, 60, 30, 1000)
    best = model.daly_interval(10, 86400, 60)
    ratio = model.waste_ratio(best * factor, best, costs, 86400)
    assert ratio == pytest.approx(1.0) if factor == 1 else 1 < ratio <= limit


@pytest.mark.parametrize(
    "call",
    [
        lambda: model.young_interval(-1, 100),
        lambda: model.young_interval(1, 0),
        lambda: model.daly_interval(1, 100, -5),
        lambda: model.job_mtbf_s(float("nan"), 2),
        lambda: model.job_mtbf_s(24, 0),
        lambda: Costs(0, 1, 1, 1),
    ],
)
def test_bad_inputs_raise_model_error_naming_the_symbol(call):
    with pytest.raises(ModelError, match="must be"):
        call()
