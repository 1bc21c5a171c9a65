"""The diagnosis as text for a terminal: the ranked failures, each with the
user's own lines as evidence, the explanation and the command that
reproduces it here; or, when nothing matches, the lines worth a look."""

from __future__ import annotations

import textwrap

from chaos.diagnose.match import Match, suspicious, tied_first
from chaos.diagnose.observe import WorkerObservations


def _indent(text: str, prefix: str = "      ") -> str:
    return textwrap.indent(text.rstrip(), prefix)


def summary(workers: list[WorkerObservations]) -> str:
    errors = sum(len(w.errors) for w in workers)
    exits = [e for w in workers for e in w.exits]
    steps = sum(len(w.steps) for w in workers)
    names = ", ".join(w.name for w in workers[:6]) + (f", ... ({len(workers)} in all)" if len(workers) > 6 else "")
    return f"read {len(workers)} log(s): {names}; {errors} error(s), {len(exits)} exit(s), {steps} step event(s)"


def _match(rank: int, match: Match, tied_with: list[Match]) -> list[str]:
    entry = match.entry
    out = [
        f"{rank}. {entry.name}  (score {match.score:.2f}; {len(match.matched)} of "
        f"{len(match.matched) + len(match.missed)} symptoms the logs can show)"
    ]
    if tied_with:
        out.append("   equally likely: the logs show the same symptoms as " + ", ".join(m.entry.name for m in tied_with))
    out.append(f"   {entry.description}")
    out.append("   evidence from your logs:")
    for result in match.matched:
        out.append(f"     + {result.signature.label()}")
        out.extend(f"         {e.shown()}" for e in result.judged.evidence)
    for result in match.missed:
        out.append(f"     - not seen: {result.signature.label()}")
    for result in match.untold:
        out.append(f"     ? the logs cannot tell: {result.signature.label()}")
    for e in match.unexplained:
        out.append(f"     ! not explained by this failure: {e.shown()}")
    out += ["   symptom:", _indent(entry.symptom), "   cause:", _indent(entry.cause), "   fix:", _indent(entry.fix)]
    for where in entry.measured:
        out.append(f"   measured: {where}")
    out.append(f"   reproduce: {entry.command}")
    return out


def render(workers: list[WorkerObservations], ranked: list[Match], top: int, notes: list[str]) -> str:
    lines = [summary(workers)]
    lines += [f"note: {n}" for n in notes]
    if not ranked:
        lines.append("")
        lines.append("no failure in the catalogue matches these logs.")
        found = suspicious(workers)
        if found:
            lines.append("lines worth a look:")
            lines.extend(f"  {e.shown()}" for e in found)
        else:
            lines.append("no error, failed exit or wait for peers was found in them either.")
        lines.append("hint: `chaos list` shows every scenario; a failure not in the catalogue is worth a new scenario (docs/diagnose.md)")
        return "\n".join(lines)
    first = tied_first(ranked)
    shown = ranked[: max(top, len(first))]
    lines.append(f"most likely failure{'s' if len(first) > 1 else ''} first ({len(ranked)} of the catalogue match):")
    for i, match in enumerate(shown, 1):
        tied = [m for m in first if m is not match] if match in first else []
        lines.append("")
        lines.extend(_match(i, match, tied))
    if len(ranked) > len(shown):
        lines.append("")
        lines.append("also matching, less likely: " + ", ".join(f"{m.entry.name} ({m.score:.2f})" for m in ranked[len(shown):]))
    return "\n".join(lines)
