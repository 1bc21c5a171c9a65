"""Does a scenario run's own worker logs diagnose as that scenario?

The suite asks this after every scenario that passed (chaos.pytest_plugin):
the catalogue is only worth something if the logs of the very failure it
describes point back to it. The rule:

* a diagnosable scenario must be ranked first, or tied-first: tied entries
  score the same on these logs, i.e. the logs show the same symptoms for
  them (``port-refused-...`` and ``stream-cut-...`` both end in ``Socket
  closed``: no log can tell them apart, and the output says so);
* a scenario with nothing to match (its only symptom check is ``no_error``,
  e.g. ``slow-close-at-bring-up-trains-normally``) must give no match at all,
  or, when its logs show no error, only slower steps: a packet loss or a
  reordered stream stretches steps without an error, and no log tells that
  from a throttled CPU, a slow link or a busy machine, so the silent slowdowns
  tied first (``cpu-throttled-...``, ``packet-delay-...``) are what its logs
  honestly look like (the verdict says so, and that it is not ranked itself);
* a scenario with a symptom check no log can show (``catalogue.unseen_checks``:
  weights digests, backup contents, a slowdown of a whole container) is not
  judged: the outcome is recorded, never counted as a pass.

A run that shared the machine's cores with other scenarios (every one whose
checks judge no step times: the suite runs those side by side) is judged with
step times as no evidence: ``SlowdownSignature`` cannot tell on its logs. The
suite runs the timing-sensitive scenarios alone for the same reason. Without
it, a neighbour's load made slower steps that lifted a straggler entry above
the run's own scenario (CI, 2026-11-27: preempted-... ranked
straggler-then-killed-... 6.53 against its own 5.50; connection-reset-...
3.33 against 3.00; packet-duplicate-... diagnosed as the silent slowdowns).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from chaos.checks.verdict import Status, Verdict, failed, passed, unknown
from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.history import LogHistory
from chaos.diagnose.logs import WorkerLog, read_logs
from chaos.diagnose.loops import worker_logs_of
from chaos.diagnose.match import Match, judge_entry, rank, tied_first
from chaos.diagnose.observe import observe_all
from chaos.diagnose.signatures import Signature, SlowdownSignature


def report_logs(report) -> list[WorkerLog]:
    """The run's worker logs: the report's artifact files when it wrote them,
    else the same lines rebuilt from its timeline."""
    files = [
        path
        for label, path in sorted(report.artifacts.items())
        if label.startswith("worker-") and label.endswith(" log")
    ]
    if files and all(Path(f).is_file() for f in files):
        return read_logs(files)[0]
    # as the report writes them: with the runner's teardown line, so its kill is not read as the failure's
    return worker_logs_of(list(report.timeline), report.scenario)


CHECK = "diagnose"  # the self-diagnosis check's name in its verdict


@dataclass(frozen=True)
class StepTimesUntold(Signature):
    """A slowdown signature on the logs of a run that shared its cores: cannot tell."""

    slowdown: SlowdownSignature
    weight = SlowdownSignature.weight

    def label(self) -> str:
        return self.slowdown.label() + " (not judged: the run shared its cores)"

    def judge(self, logs: LogHistory) -> Verdict:
        return self.cannot_tell("the run shared its cores, so its step times are no evidence")


def without_step_times(entries: list[KnownFailure]) -> list[KnownFailure]:
    """The catalogue with every slowdown signature judging "cannot tell"."""
    return [
        replace(
            e, signatures=tuple(StepTimesUntold(s) if isinstance(s, SlowdownSignature) else s for s in e.signatures)
        )
        for e in entries
    ]


def _only_slower_steps(match: Match) -> bool:
    """Whether all a match found in the logs is slower steps: its positive
    evidence, slowdowns only, and none of its symptoms seen missing but "no error"
    (an entry that expects an error or an exit the logs lack is no silent one)."""
    positive = [r for r in match.matched if r.signature.positive]
    missed = [r for r in match.missed if r.signature.positive]
    return bool(positive) and not missed and all(isinstance(r.signature, SlowdownSignature) for r in positive)


def verdict(
    name: str, logs: list[WorkerLog], entries: list[KnownFailure], *, shared_cores: bool = False
) -> tuple[Verdict, list[Match]]:
    """Whether scenario ``name``'s logs diagnose as that scenario (the verdict, its reason one
    line), and the ranking; unknown when the rule cannot judge (part of the symptom is in no log).
    ``shared_cores``: the run shared the machine with other runs, so its step times are no evidence."""
    if shared_cores:
        entries = without_step_times(entries)
    own = next((e for e in entries if e.name == name), None)
    if own is None:
        return _said(failed(f"{name} is not in the catalogue")), []
    workers = observe_all(logs)
    ranked = rank(entries, workers)
    first = tied_first(ranked)
    shown = ", ".join(f"{m.entry.name} ({m.score:.2f})" for m in ranked[:4]) or "nothing"
    if own.unseen:
        # Part of its symptom is not in any log: its rank says nothing either way.
        why = f"not judged: {', '.join(own.unseen)} cannot be seen in a log; the logs rank {shown}"
        return _said(unknown(why)), ranked
    if not own.diagnosable:
        if not ranked:
            return _said(passed("no match, as expected of a scenario with no symptom in its logs")), ranked
        quiet = all(r.verdict.status is not Status.FAIL for r in judge_entry(own, LogHistory(workers)).results)
        if quiet and all(_only_slower_steps(m) for m in first):
            # Its symptom is "no error"; slower steps are no error either, and no log tells a
            # packet loss from a throttled CPU or a busy machine: a tie among silent slowdowns
            # it is not ranked in (it states no slowdown), said so, not a mismatch.
            slow = ", ".join(m.entry.name for m in first)
            why = (
                f"no error in its logs, as expected; they show only slower steps, tied first with the silent "
                f"slowdowns {slow} ({first[0].ranked_at:.2f}); {name} itself is not ranked: it states no symptom a log shows"
            )
            return _said(passed(why)), ranked
        return _said(failed(f"{name} has no symptom a log shows, but its logs diagnose as {shown}")), ranked
    if any(m.entry.name == name for m in first):
        tied = [m.entry.name for m in first if m.entry.name != name]
        return _said(passed(f"diagnosed as {name}" + (f" (tied with {', '.join(tied)})" if tied else ""))), ranked
    return _said(failed(f"its own logs do not diagnose as {name}: ranked {shown}")), ranked


def _said(verdict: Verdict) -> Verdict:
    return self_diagnosis(verdict, CHECK)


def self_diagnosis(verdict: Verdict, check: str) -> Verdict:
    """A verdict of the suite's self-diagnosis (role ``self-diagnosis``), as check ``check``."""
    return verdict.about(check, "self-diagnosis", {})
