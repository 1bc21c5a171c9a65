"""The catalogue of failures: one entry per scenario file, its signatures
read from what the scenario's symptom checks (``expect:``) judge and its
optional ``signatures:`` list, its explanation from ``explain:``, and where
docs/findings.md records the measurement. A new scenario file is a new entry;
no code names a scenario. Next to them, the failures known from the field
that this machine cannot reproduce (GPU memory, NCCL, eviction...):
``chaos.diagnose.field``, each marked as such. Every entry has a family
(``chaos.diagnose.families``).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from chaos.diagnose import signatures as sig
from chaos.diagnose.families import scenario_family
from chaos.diagnose.logs import DiagnoseError
from chaos.resources import builtin_scenarios_dir, source_checkout
from chaos.scenario.loader import load_many
from chaos.scenario.model import Scenario


@dataclass(frozen=True)
class KnownFailure:
    name: str
    file: str
    description: str
    symptom: str
    cause: str
    fix: str
    signatures: tuple[sig.Signature, ...]
    measured: tuple[str, ...]  # "docs/findings.md § heading"
    # Symptom checks no worker log can show (weights digests, backup contents, a
    # slowdown with no fault-free stretch in the same container): the entry is
    # then only part of the scenario's symptom.
    unseen: tuple[str, ...] = ()
    family: str = "other"
    origin: str = "scenario"  # or "field": known from public reports, not reproduced here
    sources: tuple[str, ...] = ()  # for a field entry: threads that show it
    # for a field entry this machine does reproduce outside the catalogue (a user's job's suite): the command
    reproduced_by: str = ""

    @property
    def from_field(self) -> bool:
        return self.origin == "field"

    @property
    def command(self) -> str:
        return "" if self.from_field else f"chaos run {self.file}"

    @property
    def diagnosable(self) -> bool:
        """Whether any log could show it: a scenario whose only symptom is
        "nothing happens" (no_error) has nothing to match."""
        return any(s.positive for s in self.signatures)


# The framework's own evidence, not a log's: these symptom checks read weights
# digests and backups that only the harness reports.
# So do the harness's plan and step fields: initial weights, dropout masks, batch sizes;
# and the agent's reading of a custom loop's counters at each save and restore.
FRAMEWORK_ONLY = frozenset(
    {
        "weights_diverged",
        "checkpoints_disagree",
        "identical_initial_weights",
        "distinct_dropout_masks",
        "unequal_local_batches",
        "job_counters_differ",
        "job_counters_changed_by_restore",
    }
)


def unseen_checks(scenario: Scenario) -> tuple[str, ...]:
    """The scenario's symptom checks that no worker log can show."""
    out = []
    for check in scenario.expect:
        fault = scenario.faults[getattr(check, "fault", 0)].fault if scenario.faults else None
        # A slowdown compares steps before the fault with steps in it; a fault applied
        # at create slows the whole container, whose log has no "before".
        at_create = check.name == "slowdown" and fault is not None and fault.applies_at_create
        if check.name in FRAMEWORK_ONLY or at_create:
            out.append(check.name)
    return tuple(dict.fromkeys(out))


def signatures_of(scenario: Scenario) -> tuple[sig.Signature, ...]:
    """What the scenario's symptom checks and ``signatures:`` say a log shows.
    A check type this module does not know (a plugin's) adds nothing."""
    out: list[sig.Signature] = []
    for check in scenario.expect:
        name = check.name
        workers = tuple(check.workers) if getattr(check, "workers", None) else None
        if hasattr(check, "classes") and isinstance(getattr(check, "message", None), str):
            # `error`, and any check that judges an error class and message (e.g. `restore_failed`)
            out.append(sig.ErrorSignature(tuple(check.classes), check.message, workers))
        elif name == "exit_code":
            out.append(sig.ExitSignature(check.code, check.oom_killed, workers))
        elif name == "hang_at_bring_up":
            out.append(sig.HangSignature(check.min_s, tuple(check.missing) if check.missing else None))
        elif name == "stall":
            fault = scenario.faults[getattr(check, "fault", 0)] if scenario.faults else None
            if fault is not None and fault.at.before_start:
                # its window begins before the first step: a log shows it from the wait for peers on
                out.append(sig.BringUpStallSignature(check.min_s))
            else:
                out.append(sig.StallSignature(check.min_s))
        elif name == "slowdown":
            out.append(sig.SlowdownSignature(check.factor))
        elif name == "environment_skew":
            out.append(sig.SkewSignature(tuple(check.keys) if check.keys else ("tf_version",)))
        elif name == "identical_batches":
            out.append(sig.IdenticalBatchesSignature(check.min_steps))
        elif name == "no_error":
            out.append(sig.NoErrorSignature())
    out.extend(sig.PatternSignature(s.pattern, s.why or "") for s in scenario.signatures)
    unique: list[sig.Signature] = []
    for s in out:  # two faults' identical checks are one symptom
        if s not in unique:
            unique.append(s)
    return tuple(unique)


def findings_sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of each ``## `` section of findings.md."""
    parts = re.split(r"^## +(.+)$", text, flags=re.MULTILINE)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def _mentions(body: str, name: str) -> bool:
    """Whether a findings section names the scenario: in full, abbreviated
    (```version-skew-tf215-...```), or by a glob (``scenarios/tf-config-*.yaml``)."""
    for token in re.findall(r"`([^`\s]+)`", body):
        token = token.removeprefix("scenarios/").removesuffix(".yaml")
        if token == name:
            return True
        if token.endswith("...") and len(token) > 8 and name.startswith(token.rstrip(".")):
            return True
        if "*" in token and fnmatch.fnmatch(name, token):
            return True
    return False


def _shown_file(path: Path | None, name: str) -> str:
    if path is None:
        return f"scenarios/{name}.yaml"
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def build(
    scenario_paths: list[str | Path], findings: Path | None, field: bool = False
) -> tuple[list[KnownFailure], list[str]]:
    """The catalogue from scenario files and folders (then, with ``field``, the
    entries known from the field), and a note per file that did not load (it
    is left out, the others still count)."""
    loaded = load_many(scenario_paths)
    if not loaded.scenarios:
        problems = "; ".join(e.message.splitlines()[0] for e in loaded.errors[:3])
        raise DiagnoseError(
            f"no scenario to match against in {', '.join(map(str, scenario_paths))}"
            + (f": {problems}" if problems else ""),
            hint="give the folder of scenario files with --scenarios (default: scenarios/)",
        )
    sections = []
    if findings is not None and findings.is_file():
        sections = findings_sections(findings.read_text(encoding="utf-8", errors="replace"))
    shown_findings = _shown_file(findings, "") if findings else ""
    entries = []
    for scenario in loaded.scenarios:
        measured = tuple(
            f"{shown_findings} § {heading}" for heading, body in sections if _mentions(body, scenario.name)
        )
        entries.append(
            KnownFailure(
                name=scenario.name,
                file=_shown_file(scenario.source, scenario.name),
                description=" ".join(scenario.description.split()),
                symptom=scenario.explain.symptom.strip(),
                cause=scenario.explain.cause.strip(),
                fix=scenario.explain.fix.strip(),
                signatures=signatures_of(scenario),
                measured=measured,
                unseen=unseen_checks(scenario),
                family=scenario_family(scenario.name),
            )
        )
    if field:
        from chaos.diagnose.field import field_entries

        entries.extend(field_entries())
    notes = [f"left out: {e.message.splitlines()[0]}" for e in loaded.errors]
    return entries, notes


def default_scenarios() -> Path:
    """scenarios/ in the working directory, else the shipped ones."""
    here = Path("scenarios")
    return here if here.is_dir() else builtin_scenarios_dir()


def default_findings() -> Path | None:
    """docs/findings.md in the working directory or the checkout; a wheel ships
    none, and the catalogue then cites no measurements."""
    checkout = source_checkout()
    for candidate in [Path("docs/findings.md")] + ([checkout / "docs" / "findings.md"] if checkout else []):
        if candidate.is_file():
            return candidate
    return None
