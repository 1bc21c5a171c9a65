"""The logs a user gives ``chaos diagnose``, split into one ``WorkerLog`` per worker.

A path is a file (one worker's log, or a dump of several pods), or a folder
(each regular file in it, not its subfolders). A dump is split where it says
a new pod starts: ``kubectl logs --prefix`` lines (``[pod/NAME/CONTAINER] ...``),
``docker-compose logs`` lines (``worker-1_1  | ...``), or header lines that scripts and people put between pods (``==> NAME <==`` as
``tail`` prints, ``===== pod/NAME =====``, ``$ kubectl logs NAME``,
``Pod: NAME``).
"""

from __future__ import annotations

import io
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

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
    re.compile(
        r"^(?:[$#>] )?kubectl logs\s+(?:(?:-[-\w]+(?:[= ][\w.=-]+)?)\s+)*(?:pods?/)?(?P<name>[a-z0-9][\w.-]*)",
        re.IGNORECASE,
    ),
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


SNIFF_LINES = 2000  # a file's layout (one log, a prefixed dump, a dump with headers) is told from its first lines


def _open_text(path: Path) -> Iterator[str]:
    """The file's lines, read as they are needed (a long log is never held whole):
    a DiagnoseError now for a file that cannot be read or is not text."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise DiagnoseError(f"{path}: cannot read it: {exc.strerror or exc}", hint=HINT) from None
    try:
        head = handle.read(SNIFF_BYTES)
        if _is_binary(head):
            raise DiagnoseError(
                f"{path}: not a text log (binary data in its first {len(head)} bytes)",
                hint="give the text the job printed, e.g. `kubectl logs POD > worker-0.log`; compressed logs: unpack them first",
            )
        size = os.fstat(handle.fileno()).st_size
        handle.seek(size - MAX_BYTES if size > MAX_BYTES else 0)
    except OSError as exc:
        handle.close()
        raise DiagnoseError(f"{path}: cannot read it: {exc.strerror or exc}", hint=HINT) from None
    except DiagnoseError:
        handle.close()
        raise
    return _lines_of(handle, path)


def _lines_of(handle: BinaryIO, path: Path) -> Iterator[str]:
    """Lines as ``str.splitlines`` cuts them, one physical line at a time."""
    with handle, io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline="") as text:
        try:
            for physical in text:
                pieces = physical.splitlines()
                if not pieces:  # an empty line
                    yield ""
                elif len(pieces) == 1:
                    yield pieces[0]
                else:  # a form feed, a vertical tab, a Unicode line separator...
                    yield from pieces
        except OSError as exc:
            raise DiagnoseError(f"{path}: cannot read it: {exc.strerror or exc}", hint=HINT) from None


# The cheap test before the header patterns: most lines cannot start a header.
_HEADER_START = re.compile(r"\s*(?:==>|[-=#*]{3}|[$#>] [Kk]|[Kk][Uu][Bb][Ee][Cc][Tt][Ll] |[Pp][Oo][Dd])")
PREAMBLE = None  # the name Splitter gives the lines before a dump's first header


class Splitter:
    """One file's lines as (worker name, line number, text), in one pass: the
    layout is told from its first SNIFF_LINES lines. Lines before the first pod
    header of a dump are given the name PREAMBLE; ``preamble_name`` says what to
    call them once the file is read (None: they were blank, drop them)."""

    def __init__(self, default_name: str) -> None:
        self.default_name = default_name
        self.headers_seen = False
        self.preamble_lines = 0  # non-blank ones

    def split(self, lines: Iterator[str]) -> Iterator[tuple[str | None, int, str]]:
        head = list(itertools.islice(lines, SNIFF_LINES))
        nonblank = [line for line in head if line.strip()]
        every = itertools.chain(head, lines)
        for prefix in _PREFIXES:
            if nonblank and sum(1 for line in nonblank if prefix.match(line)) * 2 >= len(nonblank):
                yield from self._prefixed(every, prefix)
                return
        yield from self._headed(every)

    @staticmethod
    def _prefixed(lines: Iterable[str], prefix: re.Pattern) -> Iterator[tuple[str | None, int, str]]:
        current = None
        match_prefix = prefix.match
        for number, line in enumerate(lines, 1):
            match = match_prefix(line)
            if match:
                current = match["pod"]
                yield current, number, match["text"]
            elif current is not None:  # a line that lost its prefix (wrapped): the last pod's
                yield current, number, line
            # else: before any pod's first line: kubectl's own messages

    def _headed(self, lines: Iterable[str]) -> Iterator[tuple[str | None, int, str]]:
        name: str | None = PREAMBLE
        start = _HEADER_START.match
        for number, line in enumerate(lines, 1):
            header = _header(line) if start(line) else None
            if header:
                name = header
                self.headers_seen = True
                continue
            if name is PREAMBLE and line.strip():
                self.preamble_lines += 1
            yield name, number, line

    @property
    def preamble_name(self) -> str | None:
        if not self.headers_seen:
            return self.default_name
        return f"{self.default_name} (before the first pod)" if self.preamble_lines else None


def split_dump(text: str, origin: str, default_name: str) -> list[WorkerLog]:
    """One file's text as one log per pod it holds (a single log if it holds no boundaries)."""
    return split_lines(iter(text.splitlines()), origin, default_name)


def split_lines(lines: Iterator[str], origin: str, default_name: str) -> list[WorkerLog]:
    splitter = Splitter(default_name)
    by_name: dict[str | None, tuple[list[str], list[int]]] = {}
    for name, number, line in splitter.split(lines):
        texts, numbers = by_name.setdefault(name, ([], []))
        texts.append(line)
        numbers.append(number)
    out = []
    for name, (texts, numbers) in by_name.items():
        if name is PREAMBLE:
            name = splitter.preamble_name
            if name is None:
                continue
        out.append(WorkerLog(name, origin, tuple(texts), tuple(numbers)))
    if not out and not by_name:
        out.append(WorkerLog(default_name, origin, (), ()))
    return out


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


def check_paths(paths: list[str | Path]) -> list[tuple[Path, list[Path]]]:
    """Each path with the files it names; a DiagnoseError for no path, a
    missing one or an empty folder (before anything is read)."""
    if not paths:
        raise DiagnoseError("no log given", hint=HINT)
    return [(Path(given), _files(Path(given))) for given in paths]


# The first line of this framework's own proxy's log (chaos.proxy.server), as a run's report
# folder holds it beside the workers' logs: not a worker's log, so not read as one (it would
# be a "worker" that raised nothing, and every worker's same error would read as one's).
OUR_PROXY_BANNER = re.compile(r"chaos\.proxy toxiproxy-compatible server \S+ listening on ")


def _is_our_proxy_log(first: str) -> bool:
    return bool(OUR_PROXY_BANNER.search(first))


def iter_files(paths: list[str | Path], notes: list[str]) -> Iterator[tuple[Path, Iterator[str]]]:
    """Each text file the paths hold with its lines (read lazily). Binary files
    inside a folder are skipped with a note, and so is the framework's own proxy's
    log in a report folder; a binary file named directly, a missing path, an empty
    folder or one with no text file are errors."""
    for path, files in check_paths(paths):
        readable = 0
        for file in files:
            try:
                lines = _open_text(file)
            except DiagnoseError as exc:
                if path.is_file():
                    raise
                notes.append(f"skipped {exc.message}")
                continue
            readable += 1
            first = next(lines, None)
            if first is not None and path.is_dir() and _is_our_proxy_log(first):
                notes.append(f"skipped {file}: the tfchaos proxy's own log (its run's report), not a worker's")
                continue
            yield file, itertools.chain(() if first is None else (first,), lines)
        if path.is_dir() and not readable:
            raise DiagnoseError(f"{path}: none of its {len(files)} files is a text log", hint=HINT)


def read_logs(paths: list[str | Path]) -> tuple[list[WorkerLog], list[str]]:
    """Every worker log the paths hold, and notes on files that were skipped
    (binary files inside a folder; a binary file named directly is an error).
    Holds every line: ``chaos.diagnose.observe.observe_files`` reads long logs
    without keeping them."""
    notes: list[str] = []
    logs: list[WorkerLog] = []
    for file, lines in iter_files(paths, notes):
        logs.extend(split_lines(lines, str(file), file.stem))
    logs = _unique_names(logs)
    if not any(line.strip() for log in logs for line in log.lines):
        raise empty_logs_error(paths)
    return logs, notes


def empty_logs_error(paths: list[str | Path]) -> DiagnoseError:
    return DiagnoseError(f"{', '.join(str(p) for p in paths)}: the logs are empty", hint=HINT)


def unique_names(keys: list[tuple[str, str]]) -> list[str]:
    """(origin, name) of each log as the name shown: two files both called
    worker-0.log (two jobs' folders) stay apart, their path tells them apart."""
    counts: dict[str, int] = {}
    for _, name in keys:
        counts[name] = counts.get(name, 0) + 1
    return [f"{name} ({origin})" if counts[name] > 1 else name for origin, name in keys]


def _unique_names(logs: list[WorkerLog]) -> list[WorkerLog]:
    names = unique_names([(log.origin, log.name) for log in logs])
    return [
        log if log.name == name else WorkerLog(name, log.origin, log.lines, log.line_numbers)
        for log, name in zip(logs, names)
    ]


_INDEX = re.compile(r"(?:^|[-_.])(?:worker|replica|task)[-_]?(\d+)(?:$|[-_.])", re.IGNORECASE)


def worker_index(name: str) -> int | None:
    """The task index a log's name gives (``worker-1``, ``job-worker-1-x7z``), 0 for
    a chief, None when the name does not say (then roles are not judged)."""
    lowered = re.sub(r" \(.*\)$", "", name).lower()  # "worker-0 (jobs/a/worker-0.log)": two files of one name
    if re.search(r"(?:^|[-_.])chief(?:$|[-_.\d])", lowered):
        return 0
    match = _INDEX.search(lowered)
    return int(match.group(1)) if match else None
