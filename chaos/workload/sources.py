"""What a user's job can report, as far as its own code shows before it runs.

With ``agent: auto`` a final weights digest comes from one of three places: the
agent's hook on Keras ``fit`` (which reports it when fit ends), a custom loop's
``tf.train.Checkpoint`` (chaos.agent.loop digests what it holds at exit), or the
job's own ``report.done(model.get_weights())`` call (``chaos.agent.report``).
Validation cannot run the job, but when the job is built from a local context
and its command names a script found there, the context's Python files are the
job's code: if none of them calls ``fit``, makes a ``Checkpoint`` or imports
``chaos.agent``, no run of it can report a digest, and a check that needs one
will be unknown.

Anything else (a prebuilt ``image:``, a command naming no script in the
context, more files than a job's repository holds) is not knowable here; the
run then finds out (chaos.runner.reference: the uninterrupted run shows what
the job reports).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from chaos.workload.spec import WorkloadSpec

FIT = re.compile(r"\.fit\s*\(")
CHECKPOINT = re.compile(r"\bCheckpoint\s*\(")  # tf.train.Checkpoint(...), what the agent digests of a loop
AGENT = re.compile(r"\bchaos\.agent\b|\bfrom\s+chaos\s+import\s+agent\b")
MAX_FILES = 500  # Python files read from one build context
MAX_BYTES = 2 << 20  # per file
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache"}


def _python_files(context: Path) -> list[Path] | None:
    """The context's Python files (sorted), or None when there are too many to say anything."""
    found: list[Path] = []
    for root, dirs, files in os.walk(context):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if name.endswith(".py"):
                found.append(Path(root) / name)
                if len(found) > MAX_FILES:
                    return None
    return found


def _script(workload: WorkloadSpec, files: list[Path]) -> Path | None:
    """The file of the first ``*.py`` argument of the command, looked up in the context."""
    name = next((arg for arg in workload.command or () if arg.endswith(".py")), None)
    if name is None:
        return None
    by_tail = [f for f in files if f.as_posix().endswith("/" + name.lstrip("./")) or f.name == Path(name).name]
    return by_tail[0] if by_tail else None


def _read(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def no_digest_reason(workload: WorkloadSpec) -> str | None:
    """Why no run of this job can report a final weights digest, when its code at hand shows it; else None."""
    if workload.agent != "auto" or workload.build is None or not workload.based:
        return None
    context = workload.context_dir
    if context is None or not context.is_dir():
        return None
    files = _python_files(context)
    if not files:
        return None
    script = _script(workload, files)
    if script is None:
        return None
    if any(FIT.search(text) or CHECKPOINT.search(text) or AGENT.search(text) for text in map(_read, files)):
        return None
    where = script.relative_to(context).as_posix()
    return (
        f"no weights digest: the job's code ({where} and the other Python files of its build context) "
        "runs no Keras fit, makes no tf.train.Checkpoint and no report call "
        "(report.done(model.get_weights()) gives one)"
    )
