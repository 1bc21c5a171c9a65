"""The checkpoint/restart model behind the card's goodput figures: pure
functions of measured costs, no I/O, each with its formula as text so the card
prints what it computed.

Symbols (seconds throughout):

* ``C``   save cost: wall time one checkpoint adds to training
* ``R``   restart cost: from the orchestrator's restart to the first training step
* ``D``   detection: from a failure to the restart (the job noticing it failed)
* ``tau`` checkpoint interval: training time between two saves
* ``M``   the job's mean time between failures: one node's MTBF / the number of nodes
  (failures independent, any node's failure stops an MWMS job)

Sources: J. W. Young, "A first order approximation to the optimum checkpoint
interval", CACM 17(9), 1974 (tau = sqrt(2 C M)); J. T. Daly, "A higher order
estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3),
2006 (first-order tau = sqrt(2 C (M + R)) - C, the restart refinement).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOUR_S = 3600.0


class ModelError(ValueError):
    """A model input out of its domain (the CLI checks its inputs first)."""


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ModelError(f"{name} must be a finite number > 0 (got {value!r})")
    return float(value)


def _non_negative(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise ModelError(f"{name} must be a finite number >= 0 (got {value!r})")
    return float(value)


def job_mtbf_s(node_mtbf_hours: float, nodes: int) -> float:
    """M = node MTBF / nodes: with N independent nodes failing at rate 1/MTBF
    each, the job (which stops when any one stops) fails at rate N/MTBF."""
    _positive("node MTBF (hours)", node_mtbf_hours)
    if not isinstance(nodes, int) or nodes < 1:
        raise ModelError(f"nodes must be a whole number >= 1 (got {nodes!r})")
    return node_mtbf_hours * HOUR_S / nodes


def young_interval(save_cost_s: float, mtbf_s: float) -> float:
    """Young (1974): tau = sqrt(2 C M)."""
    return math.sqrt(2 * _positive("C", save_cost_s) * _positive("M", mtbf_s))


def daly_interval(save_cost_s: float, mtbf_s: float, restart_s: float) -> float:
    """Daly (2006), first order with the restart cost: tau = sqrt(2 C (M + R)) - C,
    and M itself once C reaches 2M (checkpointing then costs more than it saves)."""
    c, m, r = _positive("C", save_cost_s), _positive("M", mtbf_s), _non_negative("R", restart_s)
    if c >= 2 * m:
        return m
    return math.sqrt(2 * c * (m + r)) - c


@dataclass(frozen=True)
class Costs:
    """Measured or assumed costs of one job (seconds)."""

    save_s: float  # C
    restart_s: float  # R
    detect_s: float  # D
    interval_s: float  # tau

    def __post_init__(self) -> None:
        _positive("C", self.save_s)
        _non_negative("R", self.restart_s)
        _non_negative("D", self.detect_s)
        _positive("tau", self.interval_s)


@dataclass(frozen=True)
class Goodput:
    """The modelled ETTR and where the rest goes (fractions of wall time)."""

    ettr: float
    save_overhead: float  # C / (tau + C)
    failure_loss: float  # (D + R + (tau + C)/2) / M, capped at 1
    per_failure_s: float  # D + R + (tau + C)/2
    mtbf_s: float
    costs: Costs

    def to_dict(self) -> dict:
        return {
            "ettr": self.ettr,
            "save_overhead": self.save_overhead,
            "failure_loss": self.failure_loss,
            "per_failure_s": self.per_failure_s,
            "mtbf_s": self.mtbf_s,
            "save_s": self.costs.save_s,
            "restart_s": self.costs.restart_s,
            "detect_s": self.costs.detect_s,
            "interval_s": self.costs.interval_s,
        }


ETTR_FORMULA = "ETTR = tau/(tau + C) * (1 - (D + R + (tau + C)/2) / M)"
YOUNG_FORMULA = "tau_Young = sqrt(2 C M)"
DALY_FORMULA = "tau_Daly = sqrt(2 C (M + R)) - C"
MTBF_FORMULA = "M = node MTBF / nodes"


def goodput(costs: Costs, mtbf_s: float) -> Goodput:
    """First-order effective training time ratio.

    Of every ``tau + C`` seconds, ``tau`` train (the save overhead is the rest).
    Each failure, one every M seconds of wall time, costs the detection D, the
    restart R, and on average half an interval of work done since the last save,
    ``(tau + C)/2`` (a failure is as likely at any moment). Failures are assumed
    rare against M (no failure during a restart): the first-order model both
    Young's and Daly's first-order intervals minimise.
    """
    m = _positive("M", mtbf_s)
    cycle = costs.interval_s + costs.save_s
    save_overhead = costs.save_s / cycle
    per_failure = costs.detect_s + costs.restart_s + cycle / 2
    failure_loss = min(1.0, per_failure / m)
    ettr = (1 - save_overhead) * (1 - failure_loss)
    return Goodput(ettr, save_overhead, failure_loss, per_failure, m, costs)


def waste_ratio(actual_interval_s: float, best_interval_s: float, costs: Costs, mtbf_s: float) -> float:
    """(1 - ETTR at the actual interval) / (1 - ETTR at the best one): how many
    times the time lost to saves and failures exceeds its minimum."""
    at = goodput(Costs(costs.save_s, costs.restart_s, costs.detect_s, actual_interval_s), mtbf_s)
    best = goodput(Costs(costs.save_s, costs.restart_s, costs.detect_s, best_interval_s), mtbf_s)
    lost_best = 1 - best.ettr
    return (1 - at.ettr) / lost_best if lost_best > 0 else math.inf
