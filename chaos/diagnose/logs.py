"""The logs a user gives ``chaos diagnose``, split into one ``WorkerLog`` per worker.

A path is a file (one worker's log, or a dump of several pods), or a folder
(each regular file in it, not its subfolders). A dump is split where it says
a new pod starts: ``kubectl logs --prefix`` lines (``[pod/NAME/CONTAINER] ...``),
``docker-compose logs`` lines (``worker-1_1  | ...``), or header lines that scripts and people put between pods (``==> NAME <==`` as
``tail`` prints, ``===== pod/NAME =====``, ``$ kubectl logs NAME``,
``Pod: NAME``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from chaos.errors import ChaosError

MAX_BYTES = 256 * 1024 * 1024  # a day of a chatty job; more is read as its last 256 MiB
SNIFF_BYTES = 8192


class DiagnoseError(ChaosError):
    """Bad input to ``chaos diagnose`` (exit code 2)."""

    exit_code = 2


HINT = "give worker log files, a folder of them, or a `kubectl logs` dump (e.g. `kubectl logs -l job-name=NAME --prefix > job.log`)"


@dataclass(frozen=True)
class WorkerLog:
    """One worker's lines. ``origin`` is the file, ``first_line`` the line
    number in it where this worker's lines start (a dump holds several)."""

    name: str
    origin: str
    lines: tuple[str, ...]
    line_numbers: tuple[int, ...]

    def where(self, index: int) -> str:
        return f"{self.origin}:{self.line_numbers[index]}"


# Dumps whose every line names its source: `kubectl logs --prefix` and `docker-compose logs`
# ("worker-1_1  | ...", v2: "worker-1-1  | ...").
_PREFIXES = [
    re.compile(r"^\[pod/(?P<pod>[^/\]\s]+)(?:/(?P<container>[^\]\s]+))?\] ?(?P<text>.*)$"),
    re.compile(r"^(?P<pod>[\w.-]+?)(?:[_-]\d+)?\s+\| ?(?P<text>.*)$"),
]
_HEADERS = [
    re.compile(r"^==> (?P<name>.+?) <==\s*$"),
    re.compile(r"^[-=#*]{3,}\s*(?:pod[:/ ]\s*)?(?P<name>[\w.:/-]+?)\s*[-=#*]{3,}\s*$", re.IGNORECASE),
    re.compile(r"^(?:[$#>] )?kubectl logs\s+(?:(?:-[-\w]+(?:[= ][\w.=-]+)?)\s+)*(?:pods?/)?(?P<name>[a-z0-9][\w.-]*)", re.IGNORECASE),
    re.compile(r"^pod(?: name)?:\s*(?P<name>[a-z0-9][\w.-]*)\s*$", re.IGNORECASE),
]


def _header(line: str) -> str | None:
    for pattern in _HEADERS:
        match = pattern.match(line.strip())
        if match:
            return Path(match["name"].removeprefix("pod/")).name or None
    return None


def _is_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a cut multi-byte character at the end is text
    return False


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
            if _is_binary(head):
                raise DiagnoseError(
                    f"{path}: not a text log (binary data in its first {len(head)} bytes)",
                    hint="give the text the job printed, e.g. `kubectl logs POD > worker-0.log`; compressed logs: unpack them first",
                )
            size = path.stat().st_size
            if size > MAX_BYTES:
                handle.seek(size - MAX_BYTES)
            else:
                handle.seek(0)
            data = handle.read(MAX_BYTES)
    except OSError as exc:
        raise DiagnoseError(f"{path}: cannot read it: {exc.strerror or exc}", hint=HINT) from None
    return data.decode("utf-8", "replace")


def split_dump(text: str, origin: str, default_name: str) -> list[WorkerLog]:
    """One file's text as one log per pod it holds (a single log if it holds no boundaries)."""
    lines = text.splitlines()
    nonblank = [line for line in lines if line.strip()]
    for prefix in _PREFIXES:
        if nonblank and sum(1 for line in nonblank if prefix.match(line)) * 2 >= len(nonblank):
            return _split_prefixed(lines, origin, prefix)
    headers = [(i, name) for i, line in enumerate(lines) if (name := _header(line))]
    if not headers:
        return [WorkerLog(default_name, origin, tuple(lines), tuple(range(1, len(lines) + 1)))]
    out = []
    preamble = lines[: headers[0][0]]
    if any(line.strip() for line in preamble):
        out.append(WorkerLog(f"{default_name} (before the first pod)", origin, tuple(preamble), tuple(range(1, len(preamble) + 1))))
    bounds = [i for i, _ in headers] + [len(lines)]
    for (start, name), end in zip(headers, bounds[1:]):
        out.append(WorkerLog(name, origin, tuple(lines[start + 1 : end]), tuple(range(start + 2, end + 1))))
    return _merge_same_names(out)


def _split_prefixed(lines: list[str], origin: str, prefix: re.Pattern) -> list[WorkerLog]:
    by_pod: dict[str, tuple[list[str], list[int]]] = {}
    current = None
    for number, line in enumerate(lines, 1):
        match = prefix.match(line)
        if match:
            current = match["pod"]
            text = match["text"]
        elif current is None:
            continue  # before any pod's first line: kubectl's own messages
        else:
            text = line  # a line that lost its prefix (wrapped): the last pod's
        texts, numbers = by_pod.setdefault(current, ([], []))
        texts.append(text)
        numbers.append(number)
    return [WorkerLog(pod, origin, tuple(t), tuple(n)) for pod, (t, n) in by_pod.items()]


def _merge_same_names(logs: list[WorkerLog]) -> list[WorkerLog]:
    """A pod named twice (its logs dumped in two pieces) is one worker."""
    merged: dict[str, WorkerLog] = {}
    for log in logs:
        if log.name in merged:
            old = merged[log.name]
            log = WorkerLog(log.name, log.origin, old.lines + log.lines, old.line_numbers + log.line_numbers)
        merged[log.name] = log
    return list(merged.values())


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise DiagnoseError(f"{path}: no such file or folder", hint=HINT)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DiagnoseError(f"{path}: not a file or folder", hint=HINT)
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise DiagnoseError(f"{path}: the folder holds no files (subfolders are not read)", hint=HINT)
    return files


def read_logs(paths: list[str | Path]) -> tuple[list[WorkerLog], list[str]]:
    """Every worker log the paths hold, and notes on files that were skipped
    (binary files inside a folder; a binary file named directly is an error)."""
    if not paths:
        raise DiagnoseError("no log given", hint=HINT)
    logs: list[WorkerLog] = []
    notes: list[str] = []
    for given in paths:
        path = Path(given)
        files = _files(path)
        readable = 0
        for file in files:
            try:
                text = _read(file)
            except DiagnoseError as exc:
                if path.is_file():
                    raise
                notes.append(f"skipped {exc.message}")
                continue
            readable += 1
            logs.extend(split_dump(text, str(file), file.stem))
        if path.is_dir() and not readable:
            raise DiagnoseError(f"{path}: none of its {len(files)} files is a text log", hint=HINT)
    logs = _unique_names(logs)
    if not any(line.strip() for log in logs for line in log.lines):
        raise DiagnoseError(f"{', '.join(str(p) for p in paths)}: the logs are empty", hint=HINT)
    return logs, notes


def _unique_names(logs: list[WorkerLog]) -> list[WorkerLog]:
    """Two files both called worker-0.log (two jobs' folders) stay apart: their path tells them apart."""
    counts: dict[str, int] = {}
    for log in logs:
        counts[log.name] = counts.get(log.name, 0) + 1
    return [
        WorkerLog(f"{log.name} ({log.origin})", log.origin, log.lines, log.line_numbers) if counts[log.name] > 1 else log
        for log in logs
    ]


_INDEX = re.compile(r"(?:^|[-_.])(?:worker|replica|task)[-_]?(\d+)(?:$|[-_.])", re.IGNORECASE)


def worker_index(name: str) -> int | None:
    """The task index a log's name gives (``worker-1``, ``job-worker-1-x7z``), 0 for
    a chief, None when the name does not say (then roles are not judged)."""
    lowered = name.lower()
    if re.search(r"(?:^|[-_.])chief(?:$|[-_.\d])", lowered):
        return 0
    match = _INDEX.search(lowered)
    return int(match.group(1)) if match else None
