"""Root, cascade, teardown and the restart loop as text: what an on-call
engineer reads first (which worker's line is the failure, which lines follow
from it, which exits are the kill that came after)."""

from __future__ import annotations

from chaos.diagnose.attribution import Attribution, Labelled
from chaos.diagnose.families import kind
from chaos.diagnose.loops import Loop, retry_outlook

MAX_CASCADE = 4  # cascade lines shown per cycle: the first ones; the rest are counted
MAX_TEARDOWN = 3


def root_said(a: Attribution) -> str:
    if a.root_worker is not None:
        return f"root worker: {a.root_worker}" + ("" if a.sure else " (likely, not sure: see below)")
    if a.no_root:
        return "no root worker: " + a.no_root
    return "root worker: cannot tell from these lines"


def _line(label: Labelled) -> list[str]:
    return [
        f"    {label.role:8} {label.worker}: {label.what}  ({label.why})",
        f"             {label.evidence.shown(140)}",
    ]


def _cycle(a: Attribution) -> list[str]:
    head = "first run" if a.cycle == 0 else f"after restart {a.cycle}"
    out = [f"  {head}: {root_said(a)}"]
    for label in a.roots:
        out += _line(label)
    shown: list[Labelled] = []
    for label in a.cascade:  # each worker's first cascade line: the rest says the same again
        if label.worker not in {s.worker for s in shown} and len(shown) < MAX_CASCADE:
            shown.append(label)
    for label in shown:
        out += _line(label)
    if len(a.cascade) > len(shown):
        workers = sorted({c.worker for c in a.cascade if c not in shown})
        out.append(f"    ... and {len(a.cascade) - len(shown)} more cascade lines ({', '.join(workers)})")
    for label in a.teardown[:MAX_TEARDOWN]:
        out += _line(label)
    if len(a.teardown) > MAX_TEARDOWN:
        out.append(f"    ... and {len(a.teardown) - MAX_TEARDOWN} more teardown exits")
    out += [f"    could not tell: {u}" for u in a.untold]
    return out


def attribution_lines(cycles: list[Attribution], loop: Loop | None) -> list[str]:
    """The section for every cycle that failed; nothing when none did."""
    failed = [a for a in cycles if a.failed]
    if not failed:
        return []
    out = ["root, cascade, teardown:"]
    for a in failed:
        out += _cycle(a)
    if loop is not None:
        out.append(f"  {loop.said()}")
        out += [f"      {e.shown(140)}" for e in loop.evidence]
    return out


def family_lines(family: str, cycles: list[Attribution], loop: Loop | None) -> list[str]:
    """What kind of failure a family is, and whether a restart helps it, for one diagnosis."""
    what, why = kind(family)
    return [f"   kind: {what} ({why})", f"   retry outlook: {retry_outlook(family, cycles, loop).said()}"]
