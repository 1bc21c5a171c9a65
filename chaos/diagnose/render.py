"""The diagnosis as text for a terminal: the ranked failures, each with the
user's own lines as evidence, the explanation and the command that
reproduces it here; or, when nothing matches, the lines worth a look."""

from __future__ import annotations

import textwrap

from chaos.diagnose.attribution import attribute
from chaos.diagnose.families import FAMILIES
from chaos.diagnose.loops import restart_loop
from chaos.diagnose.match import Match, confident, suspicious, tied_first
from chaos.diagnose.missing import who_is_missing
from chaos.diagnose.observations import WorkerObservations
from chaos.diagnose.render_attribution import attribution_lines, family_lines
from chaos.diagnose.signatures import proof_lines


def _indent(text: str, prefix: str = "      ") -> str:
    return textwrap.indent(text.rstrip(), prefix)


def summary(workers: list[WorkerObservations]) -> str:
    errors = sum(len(w.errors) for w in workers) + sum(g.more_errors for w in workers for g in w.generations)
    exits = [e for w in workers for e in w.exits]
    steps = sum(len(w.steps) for w in workers)
    names = ", ".join(w.name for w in workers[:6]) + (f", ... ({len(workers)} in all)" if len(workers) > 6 else "")
    gone = sorted({e.reason for e in exits if e.reason})
    torn = sum(g.teardown_exits for w in workers for g in w.generations)
    return (
        f"read {len(workers)} log(s): {names}; {errors} error(s), {len(exits)} exit(s)"
        + (f" ({', '.join(gone)})" if gone else "")
        + (f" and {torn} by the runner's teardown (not read as the failure's)" if torn else "")
        + f", {steps} step event(s)"
    )


MAX_MISSING = 6


def missing_lines(workers: list[WorkerObservations]) -> list[str]:
    """ "Who is missing": the tasks or ranks the logs show the others waiting for or losing."""
    found = who_is_missing(workers)
    if not found:
        return []
    out = ["who is missing (from any worker's lines):"]
    for m in found[:MAX_MISSING]:
        out.append(f"  {m.who}: {m.what}")
        out.append(f"      {m.evidence.shown()}")
    if len(found) > MAX_MISSING:
        out.append(f"  ... and {len(found) - MAX_MISSING} more: " + ", ".join(m.who for m in found[MAX_MISSING:]))
    return out


def _match(rank: int, match: Match, tied_with: list[Match], about: list[str] | None = None) -> list[str]:
    entry = match.entry
    origin = ""
    if entry.from_field:
        origin = (
            "  [from the field, reproduced with a user's job]"
            if entry.reproduced_by
            else "  [from the field, not reproduced here]"
        )
    out = [
        f"{rank}. {entry.name}  (score {match.score:.2f}; {len(match.matched)} of "
        f"{len(match.matched) + len(match.missed)} symptoms the logs can show){origin}"
    ]
    out.append(f"   family: {entry.family} ({FAMILIES.get(entry.family, '')})")
    out += about or []
    if match.capped_from is not None:
        out.append(f"   (its own score {match.capped_from:.2f}: ranked after the measured scenario of its family)")
    if match.lifted_to is not None:
        out.append(f"   (ranked at {match.lifted_to:.2f}, the score of the evidence from the field for its family)")
    if tied_with:
        out.append(
            "   equally likely: the logs show the same symptoms as " + ", ".join(m.entry.name for m in tied_with)
        )
    out.append(f"   {entry.description}")
    out.append("   evidence from your logs:")
    for result in match.matched:
        out.append(f"     + {result.signature.label()}")
        out.extend(f"         {e.shown()}" for e in proof_lines(result.verdict))
    for result in match.missed:
        against = (
            " (the logs show how the workers exited: a kill that did not happen counts against it)"
            if result.signature in match.kills_absent
            else ""
        )
        out.append(f"     - not seen: {result.signature.label()}{against}")
    if not entry.from_field:  # a field entry's lines are each enough: those absent are not missing evidence
        for result in match.untold:
            out.append(f"     ? the logs cannot tell: {result.signature.label()}")
    for e in match.unexplained:
        out.append(f"     ! not explained by this failure: {e.shown()}")
    out += ["   symptom:", _indent(entry.symptom), "   cause:", _indent(entry.cause), "   fix:", _indent(entry.fix)]
    for where in entry.measured:
        out.append(f"   measured: {where}")
    if entry.from_field:
        out.append("   seen in: " + ", ".join(entry.sources))
        out.append(
            f"   reproduce: {entry.reproduced_by}"
            if entry.reproduced_by
            else "   reproduce: not here (no GPU, NCCL, cloud or orchestrator on this machine): see the threads above"
        )
    else:
        out.append(f"   reproduce: {entry.command}")
    return out


def _worth_a_look(workers: list[WorkerObservations]) -> list[str]:
    found = suspicious(workers)
    if not found:
        return ["no error, failed exit or wait for peers was found in them either."]
    return ["lines worth a look:"] + [f"  {e.shown()}" for e in found]


def render(workers: list[WorkerObservations], ranked: list[Match], top: int, notes: list[str]) -> str:
    lines = [summary(workers)]
    lines += [f"note: {n}" for n in notes]
    lines += missing_lines(workers)
    cycles = attribute(workers)
    loop = restart_loop(cycles)
    lines += attribution_lines(cycles, loop)
    if not ranked:
        lines.append("")
        lines.append("no failure in the catalogue matches these logs.")
        lines += _worth_a_look(workers)
        lines.append(
            "hint: `chaos list` shows every scenario; a failure not in the catalogue is worth a new scenario (docs/diagnose.md)"
        )
        return "\n".join(lines)
    first = tied_first(ranked)
    shown = ranked[: max(top, len(first))]
    if not confident(ranked):
        families = sorted({m.entry.family for m in first})
        lines.append("")
        lines.append(
            f"no confident match: these logs fit {len(families)} families of failure equally well "
            f"({', '.join(families)}), and show nothing that tells them apart."
        )
        lines += _worth_a_look(workers)
        lines.append("")
        lines.append(f"the candidates, equally likely ({len(ranked)} of the catalogue match):")
    else:
        lines.append(
            f"most likely failure{'s' if len(first) > 1 else ''} first ({len(ranked)} of the catalogue match):"
        )
    for i, match in enumerate(shown, 1):
        tied = [m for m in first if m is not match] if match in first else []
        lines.append("")
        lines.extend(_match(i, match, tied, family_lines(match.entry.family, cycles, loop)))
    if len(ranked) > len(shown):
        lines.append("")
        lines.append(
            "also matching, less likely: " + ", ".join(f"{m.entry.name} ({m.score:.2f})" for m in ranked[len(shown) :])
        )
    return "\n".join(lines)
