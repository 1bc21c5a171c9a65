"""Checks: pure functions of the timeline that return a Verdict.

Symptom checks (``expect:``) are in ``SYMPTOM_CHECKS``, recovery checks
(``recover:``) in ``RECOVERY_CHECKS``; run them with ``run_checks``. Adding a
check: a ``SymptomCheck`` or ``RecoveryCheck`` subclass decorated with
``@register_check`` in a module imported below.
"""

from chaos.checks.base import (
    RECOVERY_CHECKS,
    SYMPTOM_CHECKS,
    Check,
    RecoveryCheck,
    SymptomCheck,
    register_check,
    run_check,
    run_checks,
)

# Import order is registration order, which `chaos list` shows.
from chaos.checks.symptom_errors import ErrorRaised, ExitCode  # isort: skip
from chaos.checks.symptom_progress import HangAtBringUp, Slowdown, Stall  # isort: skip
from chaos.checks.symptom_silent import EnvironmentSkew, IdenticalBatches, NoError, WeightsDiverged  # isort: skip
from chaos.checks.symptom_restore import CheckpointsDisagree, RestartsExhausted, RestoreFailed  # isort: skip
from chaos.checks.symptom_nonfinite import NonFiniteLoss, NonFiniteWeights, StoppedAtNonFiniteLoss  # isort: skip
from chaos.checks.recovery_state import FellBack, LostWork, RestoredSameCheckpoint, ResumedFrom  # isort: skip
from chaos.checks.recovery_fidelity import Completed, IdenticalWeights, MatchesUninterrupted  # isort: skip
from chaos.checks.recovery_timing import NormalSpeed, RecoveredWithin  # isort: skip
from chaos.checks.recovery_environment import DistinctBatches, EnvironmentsMatch  # isort: skip
from chaos.checks.recovery_placement import Rescheduled  # isort: skip
from chaos.checks.symptom_randomness import (  # isort: skip
    DistinctDropoutMasks,
    IdenticalDropoutMasks,
    IdenticalInitialWeights,
)
from chaos.checks.batch_sizes import EqualLocalBatches, UnequalLocalBatches  # isort: skip
from chaos.checks.symptom_tolerated import Tolerated  # isort: skip
from chaos.checks.job_steps import JobStepCounts  # isort: skip
from chaos.checks.job_counters import (  # isort: skip
    JobCountersAgree,
    JobCountersChangedByRestore,
    JobCountersDiffer,
    JobCountersRestored,
)
from chaos.checks.verdict import Status, Verdict

__all__ = [
    "JobStepCounts",
    "JobCountersAgree",
    "JobCountersChangedByRestore",
    "JobCountersDiffer",
    "JobCountersRestored",
    "Tolerated",
    "UnequalLocalBatches",
    "EqualLocalBatches",
    "IdenticalInitialWeights",
    "IdenticalDropoutMasks",
    "DistinctDropoutMasks",
    "RECOVERY_CHECKS",
    "SYMPTOM_CHECKS",
    "Check",
    "CheckpointsDisagree",
    "Completed",
    "DistinctBatches",
    "EnvironmentSkew",
    "EnvironmentsMatch",
    "ErrorRaised",
    "ExitCode",
    "FellBack",
    "HangAtBringUp",
    "IdenticalBatches",
    "IdenticalWeights",
    "LostWork",
    "MatchesUninterrupted",
    "NoError",
    "NonFiniteLoss",
    "NonFiniteWeights",
    "WeightsDiverged",
    "NormalSpeed",
    "RecoveredWithin",
    "RecoveryCheck",
    "Rescheduled",
    "RestartsExhausted",
    "RestoreFailed",
    "RestoredSameCheckpoint",
    "ResumedFrom",
    "Slowdown",
    "Stall",
    "StoppedAtNonFiniteLoss",
    "Status",
    "SymptomCheck",
    "Verdict",
    "register_check",
    "run_check",
    "run_checks",
]
