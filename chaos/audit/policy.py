"""Which exit codes are worth a restart: a failure policy from the battery's measured runs.

Pure: the card's RunMeasures in, a ``FailurePolicy`` out (chaos.audit.policy_yaml writes it as a
Kubernetes podFailurePolicy, a JobSet failurePolicy and Docker restart settings). A code is
*retryable* when it ended a run whose restart recovered (the run's ``completed`` verdict passed
after the runner restarted every worker); *not fixed* when it ended a run the restart did not
recover, or came again after the restart, and no recovered run ever showed it. A code seen both
ways stays retryable: failing a job on a code a restart once fixed would stop jobs that recover.
Exit code 0 is never a failure (and Kubernetes refuses it in an ``In`` rule).
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, field
from typing import Any

from chaos.audit.battery import base_key
from chaos.audit.findings import FAILURES
from chaos.audit.measure import RunMeasures

# Restarts the policy allows. Each recovery the battery measured needed one restart (its runner
# allows one); three leaves room for a second failure during a recovery and still bounds a job
# that fails the same way every time.
RETRIES = 3
# The battery's kinds whose runs restart the job (bring-up and empty-checkpoint runs too).
RESTARTING = (*FAILURES, "empty_checkpoint", "bring_up")

RECOVERED = "recovered"
NOT_RECOVERED = "not recovered"
NO_RESTART = "no restart needed"
HANG = "hang"
NOT_JUDGED = "not judged"


def signal_name(code: int) -> str:
    """``137`` -> ``SIGKILL``: a process killed by signal N exits 128 + N (shells, Docker and the
    kubelet all report it so); "" for an ordinary exit code."""
    if code <= 128:
        return ""
    try:
        return signal.Signals(code - 128).name
    except ValueError:
        return ""


def plural(codes) -> str:
    return "exit code" if len(codes) == 1 else "exit codes"


def describe(code: int) -> str:
    name = signal_name(code)
    return f"{code} ({name})" if name else str(code)


@dataclass(frozen=True)
class FaultExits:
    """What one battery entry's runs (repeats merged) showed: exit codes and whether a restart helped."""

    key: str
    title: str
    kind: str
    codes: tuple[int, ...]  # non-zero exits after the fault, before the restart
    after: tuple[int, ...]  # failing exits in the life after the restart
    outcome: str  # recovered | not recovered | no restart needed | hang | not judged
    runs: int = 1

    @property
    def seen(self) -> tuple[int, ...]:
        return tuple(sorted(set(self.codes) | set(self.after)))


@dataclass(frozen=True)
class FailurePolicy:
    workers: int
    faults: tuple[FaultExits, ...]
    retryable: tuple[int, ...]  # a restart recovered from these
    not_fixed: tuple[int, ...]  # a restart never recovered from these
    retries: int = RETRIES
    notes: tuple[str, ...] = field(default_factory=tuple)
    missing: str = ""  # why there is no policy (no failure run was measured)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _outcome(run: RunMeasures) -> str:
    restarted = run.restart_after_s.known
    completed = run.verdict("completed")
    if run.hang or "stall watchdog" in run.detect_s.note:
        return HANG
    if restarted and completed.passed:
        return RECOVERED
    if restarted and completed.failed:
        return NOT_RECOVERED
    if not restarted and completed.passed:
        return NO_RESTART
    return NOT_JUDGED


def _nonzero(codes: dict[str, int]) -> set[int]:
    return {c for c in codes.values() if c != 0}


def _merge(runs: list[RunMeasures]) -> FaultExits:
    """One entry's runs as one row: a repeat that did not recover makes the row "not recovered"."""
    outcomes = [_outcome(r) for r in runs]
    order = (NOT_RECOVERED, HANG, RECOVERED, NO_RESTART, NOT_JUDGED)
    outcome = next(o for o in order if o in outcomes)
    codes = set().union(*(_nonzero(r.exit_codes) for r in runs))
    after = set().union(*(_nonzero(r.exit_codes_after_restart) for r in runs))
    first = runs[0]
    return FaultExits(
        base_key(first.key), first.title, first.kind, tuple(sorted(codes)), tuple(sorted(after)), outcome, len(runs)
    )


def derive(runs: list[RunMeasures], retries: int = RETRIES) -> FailurePolicy:
    """The failure policy the measured runs support."""
    measured = [r for r in runs if r.measured and r.kind in RESTARTING]
    workers = max((r.workers for r in runs if r.measured), default=0)
    if not measured:
        return FailurePolicy(workers, (), (), (), retries, missing="no failure run was measured: no exit code seen")
    groups: dict[str, list[RunMeasures]] = {}
    for r in measured:
        groups.setdefault(base_key(r.key), []).append(r)
    faults = tuple(_merge(g) for g in groups.values())
    retryable: set[int] = set()
    unfixed: set[int] = set()
    for r in measured:
        outcome = _outcome(r)
        if outcome == RECOVERED:
            retryable |= _nonzero(r.exit_codes)
        elif outcome == NOT_RECOVERED:
            unfixed |= _nonzero(r.exit_codes) | _nonzero(r.exit_codes_after_restart)
    both = sorted(unfixed & retryable)
    notes = []
    if both:
        notes.append(
            f"{plural(both)} {', '.join(describe(c) for c in both)} ended both a run a restart recovered and "
            "one it did not: kept retryable (counted against the retry limit), not failed"
        )
    not_fixed = tuple(sorted(unfixed - retryable))
    if not not_fixed:
        notes.append("no exit code that a restart did not fix: the policy has no FailJob rule for exit codes")
    if 137 in retryable:
        notes.append(
            "137 (SIGKILL) is retried: it is also the code of a container the kernel's OOM killer ended, and "
            "an out-of-memory at the same step fails again after a restart; the battery killed, it did not "
            "run out of memory"
        )
    hung = [f.title for f in faults if f.outcome == HANG]
    if hung:
        notes.append(
            f"{'; '.join(hung)}: the job hung, no process exited, so no exit code or pod condition "
            "matches; only a timeout ends it (the job's collective timeout, or the Job's activeDeadlineSeconds)"
        )
    return FailurePolicy(workers, faults, tuple(sorted(retryable)), not_fixed, retries, tuple(notes))
