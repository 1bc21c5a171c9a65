"""How often `chaos diagnose` names the right family of failure on real users'
logs: the field corpus (tests/fixtures/diagnose_field/corpus.yaml), each case
read as a user would give it (one file), against the shipped catalogue
(scenarios/ and the field entries).

    python benchmarks/diagnose_accuracy.py                    # every split
    python benchmarks/diagnose_accuracy.py --split train      # while tuning rules: dev, heldout, heldout-2, dev-2
    python benchmarks/diagnose_accuracy.py --split heldout-3  # the third held-out split (read since: training data)
    python benchmarks/diagnose_accuracy.py --split heldout-4  # the fourth held-out split: measure only
    python benchmarks/diagnose_accuracy.py --split tune-4     # what round 4 tuned on: dev, dev-2, dev-3
    python benchmarks/diagnose_accuracy.py --split heldout-5  # the fifth held-out split: measure only
    python benchmarks/diagnose_accuracy.py --split train-5    # what round 5 may tune on: every split but heldout-5
    python benchmarks/diagnose_accuracy.py --split heldout-6  # the sixth held-out split: measure only
    python benchmarks/diagnose_accuracy.py --split train-6    # what round 6 may tune on: every split but heldout-6
    python benchmarks/diagnose_accuracy.py --split heldout-7  # the seventh held-out split: measure only
    python benchmarks/diagnose_accuracy.py --split train-7    # what round 7 may tune on: every split but heldout-7
    python benchmarks/diagnose_accuracy.py --split heldout-8  # the eighth held-out split: measure only
    python benchmarks/diagnose_accuracy.py --split train-8    # every split but heldout-8
    python benchmarks/diagnose_accuracy.py --split heldout-10 # the tenth held-out split (Q&A pages): measure only
    python benchmarks/diagnose_accuracy.py --split train-10   # every split but heldout-10
    python benchmarks/diagnose_accuracy.py --split heldout-11 # root workers: blind until read on 2026-12-05
    python benchmarks/diagnose_accuracy.py --big-log-mb 100  # and time a 100 MB log

Per family and split: top-1 (a confident answer, and its family is the
case's), top-3 (the case's family among the first three distinct families
shown), no match (nothing matched, or no confident answer: the entries tied
first are of different families; the candidates and the suspicious lines are
shown instead of a guess), wrong first (a confident answer of another family). Splits:
`dev` (read while writing the rules), `heldout` (the first held-out draw, run
blind once, then used while tuning), `heldout-2` (the second held-out draw,
judged once in round 2, then read), `dev-2` (cases gathered in round 3 for the
shapes heldout-2 showed missing), `train` (those four together: what rules may
be tuned on in round 3), `heldout-3` (judged once at the end of round 3, then
read), `dev-3` (training cases gathered in round 4), `tune-4` (dev, dev-2 and
dev-3: what round 4's rules were written on) and `heldout-4` (the fourth
held-out set, gathered and committed before the reader was run on it; read
per case since), `tune-5` (training cases gathered in round 5), `train-5`
(every split but heldout-5: what round 5's rules were written on) and
`heldout-5` (the fifth held-out set, committed before the reader was run on
it; read per case since), `train-6` (every split but heldout-6: what round 6's
rules may be written on) and `heldout-6` (the sixth held-out set, committed
before the reader was run on it: it only measures;
tests/fixtures/diagnose_field/README.md). `heldout-11` (root-worker cases) was
run blind on 2026-12-03; the rules written on 2026-12-05 were written after
reading its cases, so its figure after that date is not blind.

``--big-log-mb N`` writes an N MB log of real TF lines (the corpus's and the
framework's own runs', repeated with advancing timestamps, one worker per
kubectl prefix) and diagnoses it in a child process: wall time and the child's
peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from chaos.diagnose import build, rank, watch_for  # noqa: E402
from chaos.diagnose.attribution import attribute, first_failure  # noqa: E402
from chaos.diagnose.catalogue import default_findings  # noqa: E402
from chaos.diagnose.match import confident  # noqa: E402
from chaos.diagnose.observe import observe_files  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "diagnose_field" / "corpus.yaml"


def ranked_families(ranked) -> list[str]:
    out: list[str] = []
    for match in ranked:
        if match.entry.family not in out:
            out.append(match.entry.family)
    return out


def evaluate(cases: list[dict], entries) -> list[dict]:
    """Each case as a user gives it: its log in a file, read as `chaos diagnose FILE` reads it."""
    results = []
    watch = watch_for(entries)
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            path = Path(tmp) / f"{case['id']}.log"
            path.write_text(case["log"], encoding="utf-8")
            workers, _ = observe_files([path], watch)
            ranked = rank(entries, workers)
            results.append({**_result(case, ranked), **_root(case, workers)})
    return results


def _root(case: dict, workers) -> dict:
    """The root worker the attribution names (chaos/diagnose/attribution.py), and whether it is the
    case's ``root_worker`` (given where the thread tells which worker it was and the log names workers)."""
    first = first_failure(attribute(workers))
    named = first.root_worker if first is not None else None
    return {
        "root_expected": case.get("root_worker"),
        "root_named": named,
        "root_sure": bool(first is not None and first.sure and named is not None),
    }


def root_figure(results: list[dict]) -> str:
    """How often the root worker named is right, on the cases whose root worker is known."""
    known = [r for r in results if r["root_expected"]]
    if not known:
        return "root worker: no case of these has a root_worker"
    right = [r for r in known if r["root_named"] == r["root_expected"]]
    wrong = [r for r in known if r["root_named"] not in (None, r["root_expected"])]
    sure_wrong = [r for r in wrong if r["root_sure"]]
    none = len(known) - len(right) - len(wrong)
    return (
        f"root worker, on the {len(known)} cases whose log names workers and whose thread says which one it was: "
        f"{len(right)} right ({len(right) / len(known):.0%}), {len(wrong)} wrong ({len(sure_wrong)} of them said as sure), "
        f"{none} not named (cannot tell)"
        + ("".join(f"\n  wrong: {r['id']}: named {r['root_named']}, the thread: {r['root_expected']}" for r in wrong))
    )


def _result(case: dict, ranked) -> dict:
    """top-1: a confident answer of the case's family; top-3: the family among
    the first three shown (an unsure answer still shows its candidates);
    no match: nothing matched, or no confident answer (tied first across
    families); wrong first: a confident answer of another family."""
    families = ranked_families(ranked)
    sure = confident(ranked)
    return {
        "id": case["id"],
        "family": case["family"],
        "split": case["split"],
        "ranked": families[:3],
        "first": ranked[0].entry.name if ranked else None,
        "confident": sure,
        "top1": sure and families[0] == case["family"],
        "top3": case["family"] in families[:3],
        "nomatch": not sure,
    }


SPLITS = {
    "dev": ("dev",),
    "heldout": ("heldout",),
    "heldout-2": ("heldout-2",),
    "dev-2": ("dev-2",),
    "train": ("dev", "heldout", "heldout-2", "dev-2"),
    "heldout-3": ("heldout-3",),
    "dev-3": ("dev-3",),
    "heldout-4": ("heldout-4",),
    "tune-4": ("dev", "dev-2", "dev-3"),
    "heldout-5": ("heldout-5",),
    "tune-5": ("tune-5",),
    # round 5 may tune on every split but heldout-5 (heldout-4 was read in round 4)
    "train-5": ("dev", "heldout", "heldout-2", "dev-2", "heldout-3", "dev-3", "heldout-4", "tune-5"),
    "heldout-6": ("heldout-6",),
    # round 6 may tune on every split but heldout-6 (heldout-5 was read in round 5)
    "train-6": ("dev", "heldout", "heldout-2", "dev-2", "heldout-3", "dev-3", "heldout-4", "tune-5", "heldout-5"),
    "heldout-7": ("heldout-7",),
    # round 7 may tune on every split but heldout-7 (heldout-6 was read in round 6)
    "train-7": (
        "dev",
        "heldout",
        "heldout-2",
        "dev-2",
        "heldout-3",
        "dev-3",
        "heldout-4",
        "tune-5",
        "heldout-5",
        "heldout-6",
    ),
    "heldout-8": ("heldout-8",),
    # what round 7's last rules were written on: every split but heldout-8 (heldout-7 read after its blind run)
    "train-8": (
        "dev",
        "heldout",
        "heldout-2",
        "dev-2",
        "heldout-3",
        "dev-3",
        "heldout-4",
        "tune-5",
        "heldout-5",
        "heldout-6",
        "heldout-7",
    ),
    "heldout-9": ("heldout-9",),
    # what the rules were written on before heldout-9's blind run: every split but heldout-9
    "train-9": (
        "dev",
        "heldout",
        "heldout-2",
        "dev-2",
        "heldout-3",
        "dev-3",
        "heldout-4",
        "tune-5",
        "heldout-5",
        "heldout-6",
        "heldout-7",
        "heldout-8",
    ),
    "heldout-10": ("heldout-10",),
    # what the rules may be written on before heldout-10's blind run: every split but heldout-10
    "train-10": (
        "dev",
        "heldout",
        "heldout-2",
        "dev-2",
        "heldout-3",
        "dev-3",
        "heldout-4",
        "tune-5",
        "heldout-5",
        "heldout-6",
        "heldout-7",
        "heldout-8",
        "heldout-9",
    ),
    "heldout-11": ("heldout-11",),
}


def table(results: list[dict], split: str) -> str:
    rows = [r for r in results if r["split"] in SPLITS[split]]
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["family"]].append(r)
    lines = [
        f"### {split} ({len(rows)} cases)",
        "",
        "| family | cases | top-1 | top-3 | no match | wrong first |",
        "|---|---|---|---|---|---|",
    ]

    def line(name: str, group: list[dict]) -> str:
        n = len(group)
        top1 = sum(r["top1"] for r in group)
        top3 = sum(r["top3"] for r in group)
        none = sum(r["nomatch"] for r in group)
        wrong = n - top1 - none
        return f"| {name} | {n} | {top1} ({top1 / n:.0%}) | {top3} ({top3 / n:.0%}) | {none} | {wrong} |"

    for family in sorted(by):
        lines.append(line(family, by[family]))
    if rows:
        lines.append(line("**all**", rows))
    return "\n".join(lines)


def _seed_lines(cases: list[dict]) -> tuple[list[str], list[str]]:
    """Real lines (the corpus's and this framework's own runs'): those that state
    a failure, and the per-step lines (progress bars, loss/step lines, step events)
    a training job repeats, which make a log long."""
    from chaos.diagnose.shapes import shapes_in
    from chaos.workload.grammar import exception_line, exit_line, status_line

    lines = [line for c in cases for line in c["log"].splitlines() if line.strip()]
    own = ROOT / "tests" / "unit" / "diagnose" / "logs"
    for file in sorted(own.rglob("*.log")):
        lines += [line for line in file.read_text(errors="replace").splitlines() if line.strip()]
    failing = [
        line for line in lines if shapes_in(line) or status_line(line) or exception_line(line) or exit_line(line)
    ]
    # What makes a log long: per-step output (progress bars, loss/step lines, step events).
    per_step = re.compile(r"\bstep\b|/step|\bloss\b|Epoch \d|global_step/sec|\"event\":\s*\"step\"")
    quiet = [line for line in lines if line not in set(failing) and per_step.search(line)]
    return quiet, failing


def _big_log(path: Path, megabytes: int, cases: list[dict], failing_share: float) -> int:
    """An N MB `kubectl logs --prefix` dump of four workers: real lines repeated
    with advancing ISO timestamps, ``failing_share`` of them lines that state a failure."""
    quiet, failing = _seed_lines(cases)
    target = megabytes * 1024 * 1024
    written = 0
    t = 1_795_000_000.0
    every = max(1, round(1 / failing_share)) if failing_share else 0
    with path.open("w", encoding="utf-8") as out:
        i = 0
        while written < target:
            if every and i % every == 0:
                line = failing[(i // every) % len(failing)]
            else:
                line = quiet[i % len(quiet)]
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1e6) % 1_000_000:06d}Z"
            text = f"[pod/train-worker-{i % 4}/tensorflow] {stamp} {line}\n"
            out.write(text)
            written += len(text.encode())
            t += 0.001
            i += 1
    return written


def big_log_run(megabytes: int, cases: list[dict], failing_share: float = 0.01) -> dict:
    """Diagnose an N MB log in a child process: wall time (including starting
    Python and loading the catalogue) and the child's peak resident memory."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "job.log"
        size = _big_log(path, megabytes, cases, failing_share)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "chaos.cli", "diagnose", str(path), "--scenarios", str(ROOT / "scenarios")],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak_kb = after.ru_maxrss
    return {
        "bytes": size,
        "failing_share": failing_share,
        "seconds": round(elapsed, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "peak_is_this_run": peak_kb > before.ru_maxrss,
        "exit": proc.returncode,
        "first_line": (proc.stdout.splitlines() or [""])[0][:160],
        "stderr": proc.stderr[-400:],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--cases", action="store_true", help="also list each case's ranking")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--big-log-mb", type=int, default=0, metavar="N")
    parser.add_argument(
        "--failing-share",
        type=float,
        default=0.01,
        metavar="F",
        help="share of the big log's lines that state a failure (default 0.01; 1 for the worst case)",
    )
    args = parser.parse_args(argv)

    cases = yaml.safe_load(Path(args.corpus).read_text(encoding="utf-8"))
    if args.split != "all":
        cases = [c for c in cases if c["split"] in SPLITS[args.split]]
    entries, _ = build([ROOT / "scenarios"], default_findings(), field=True)
    results = evaluate(cases, entries)
    report: dict = {"results": results}
    splits = (
        [
            "dev",
            "heldout",
            "heldout-2",
            "dev-2",
            "train",
            "heldout-3",
            "dev-3",
            "tune-4",
            "heldout-4",
            "tune-5",
            "train-5",
            "heldout-5",
            "train-6",
            "heldout-6",
            "train-7",
            "heldout-7",
            "train-8",
            "heldout-8",
        ]
        if args.split == "all"
        else [args.split]
    )
    text = [table(results, split) for split in splits]
    text.append(root_figure(results))
    if args.cases:
        text.append(
            "\n".join(
                f"{'ok ' if r['top1'] else '-- ' if r['nomatch'] else 'BAD'}{'+' if r['top3'] and not r['top1'] else ' '} "
                f"{r['split']:9} {r['family']:16} {r['id']:45} -> {', '.join(r['ranked']) or 'no match'} ({r['first']})"
                for r in results
            )
        )
    if args.big_log_mb:
        big = big_log_run(
            args.big_log_mb, yaml.safe_load(Path(args.corpus).read_text(encoding="utf-8")), args.failing_share
        )
        report["big_log"] = big
        text.append(
            f"big log: {big['bytes'] / 2**20:.0f} MB ({big['failing_share']:.0%} failure lines) read and diagnosed "
            f"in {big['seconds']} s ({big['cpu_seconds']} s of CPU), peak RSS {big['peak_rss_mb']} MB, exit {big['exit']}: {big['first_line']}"
        )
    print(json.dumps(report, indent=1) if args.json else "\n\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
