"""Property: the loader `chaos validate` uses, fed mutations of the shipped scenarios,
never raises anything but ScenarioError, never hangs, never eats memory, and every
rejection names a file position or a field.

Mutations are of three kinds: bytes (inserted, deleted, replaced, repeated; among them
the bytes that broke the loader before: 0xff, NUL, BOMs, escapes, bidi marks, aliases,
merge keys, deep nesting, long numbers), YAML values (a value replaced by another
type or a nasty value, a key renamed, dropped or added, then dumped again), and whole
constructs appended (an alias bomb, nesting, thousands of keys). The kinds the issue
found are also given as explicit examples, so every run covers them.

The normal run is derandomized (the same examples every time; a failure
reproduces). To search further, CHAOS_FUZZ_EXAMPLES=5000 runs that many random
examples (hypothesis prints the failing one).
"""

from __future__ import annotations

import copy
import os
import re
import resource
import signal
import time
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.scenario import schema
from chaos.scenario.loader import load_many, load_scenario, scenario_files, scenario_from_dict

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
FILES = {p.name: p.read_bytes() for p in scenario_files(SCENARIOS)}
NAMES = sorted(FILES)
KILLED = "killed-worker-recovers-from-checkpoint.yaml"
# Hang and runaway detectors, not speed targets (benchmarks/scenario_loader_bench.py
# prints the figures): the worst load takes about 1 s, the alias bomb took minutes
# and 6-14 GB before the loader had limits.
HANG_S = 10.0
MAX_RSS_GROWTH_KB = 300 * 1024
EXAMPLES = int(os.environ.get("CHAOS_FUZZ_EXAMPLES", "250"))
DERANDOMIZE = "CHAOS_FUZZ_EXAMPLES" not in os.environ  # the normal suite: the same examples every run

NASTY_BYTES = [
    b"\xff",
    b"\x00",
    b"\xfe\xff",
    b"\xef\xbb\xbf",
    b"\x1b[2K\r",
    b"\x07",
    "\u202e".encode(),
    "\u200f".encode(),
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"? [a, b]\n: 1\n",
    b"{" * 300,
    b"[" * 2000,
    b"9" * 5000,
    b".inf",
    b".nan",
    b"010",
    b"1:30",
    b"0x1F",
    b"1e999",
    b"!!python/object/apply:os.system [x]",
    b"!!binary aGk=",
    b"!!int x",
    b"\t",
    b"\r",
    b"---\n",
    b"...\n",
    b"'",
    b'"',
    b"- ",
    b": ",
    b"\n",
    b"#",
    b"%YAML 1.1\n",
    b"|",
    b">",
    b"~",
    b"null",
    b"true",
    b"yes",
    b'"\\e[31m"',
    b'"\\u202e"',
    b"? ",
    b"!",
    b"@",
    b"`",
]
NASTY_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    3,
    2**32,
    2**64,
    10**40,
    1.5,
    -0.0,
    1e300,
    "",
    " ",
    "\t\n",
    "3",
    "true",
    "UnavailableError|DeadlineExceededError",
    "bring_up",
    "epoch",
    "nonzero",
    "none",
    "all",
    "x" * 5000,
    "\x1b[2Kok",
    "a\u202eb",
    "1:30",
    "010",
    [],
    [1],
    [True],
    ["a"],
    [[]],
    {},
    {"x": 1},
    {"step": 1, "epoch": 1},
    {"step": 0},
    {"epoch": -1},
    {"seconds": 1e9},
    {"seconds": 100000},
]


def _bomb(levels: int = 9) -> bytes:
    lines = ["lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + "\n").encode()


def _replace(name: str, old: str, new: str) -> bytes:
    text = FILES[name].decode()
    assert old in text, (name, old)
    return text.replace(old, new, 1).encode()


KILLED_TEXT = FILES[KILLED].decode()

# The kinds the issue found, each once.
KNOWN_KINDS = {
    "one 0xff byte": FILES[KILLED][:100] + b"\xff" + FILES[KILLED][100:],
    "utf-16": KILLED_TEXT.encode("utf-16"),
    "utf-16 without BOM": KILLED_TEXT.encode("utf-16-le"),
    "deep flow nesting": FILES[KILLED] + b"x: " + b"{a: " * 250 + b"1" + b"}" * 250 + b"\n",
    "list as key": FILES[KILLED] + b"? [a, b]\n: 1\n",
    "long integer": _replace(KILLED, "workers: 2", "workers: " + "9" * 4301),
    "alias bomb": FILES[KILLED] + _bomb(),
    "quadratic problems": FILES[KILLED] + "".join(f"k{i}: {i}\n" for i in range(5000)).encode(),
    "control character": _replace(KILLED, "description: >-", "description: \x01"),
    "merge key": _replace(KILLED, "recovery: {restart: all", "base: &b {restart: all}\n  recovery: {<<: *b"),
    "no-parameter check with a key": _replace(KILLED, "completed: {}", "completed: {x: 1}"),
    "terminal escape": _replace(KILLED, "description: >-", 'description: "\\e[2K\\rok"\nx: >-'),
    "right-to-left override": _replace(KILLED, "description: >-", "description: \u202e>-"),
    "error class alternatives": _replace(
        KILLED, "class: UnavailableError", "class: UnavailableError|DeadlineExceededError"
    ),
    "workers: []": _replace(KILLED, "exit_code: {workers: [1]", "exit_code: {workers: []"),
    "blank description": _replace(KILLED, "description: >-", 'description: "   "\nx: >-'),
    "workers: true": _replace(KILLED, "workers: 2", "workers: true"),
    "workers as text": _replace(KILLED, "workers: 2", 'workers: "3"'),
    "octal 010": _replace(KILLED, "epochs: 5", "epochs: 010"),
    "sexagesimal 1:30": _replace(KILLED, "within_s: 30", "within_s: 1:30"),
    "infinite timeout": _replace(KILLED, "total: 240", "total: .inf"),
    "seed numpy refuses": _replace(KILLED, "save_freq: epoch}", f"save_freq: epoch, seed: {2**32}}}"),
    "infinite heartbeat": _replace(KILLED, "save_freq: epoch}", "save_freq: epoch, heartbeat_timeout_s: .inf}"),
    "trigger after the run": _replace(KILLED, "at: {epoch: 2}", "at: {seconds: 1000}"),
    "restart none": _replace(KILLED, "restart: all", "restart: none"),
    "resume past the end": _replace(KILLED, "resumed_from: {epoch: 2}", "resumed_from: {epoch: 9}"),
    "two documents": FILES[KILLED] + b"---\nname: other\n",
    "empty file": b"",
    "top-level list": b"- 1\n- 2\n",
}

# --- strategies -----------------------------------------------------------------------


@st.composite
def byte_mutants(draw) -> bytes:
    data = bytearray(FILES[draw(st.sampled_from(NAMES))])
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "nasty", "delete", "replace", "repeat"]))
        if op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "nasty":
            data[pos:pos] = draw(st.sampled_from(NASTY_BYTES))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 40))]
        elif op == "replace" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        elif op == "repeat":
            chunk = bytes(data[pos : pos + draw(st.integers(1, 60))])
            data[pos:pos] = chunk * draw(st.integers(1, 50))
    return bytes(data)


def _paths(value, here=()):
    yield here
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*here, i))


def _at(value, path):
    for item in path:
        value = value[item]
    return value


nasty_values = st.one_of(
    st.sampled_from(NASTY_VALUES).map(copy.deepcopy),  # copies: a mutant may be mutated again
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=8,
    ),
)


@st.composite
def value_mutants(draw) -> bytes:
    data = yaml.safe_load(FILES[draw(st.sampled_from(NAMES))])
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        path = draw(st.sampled_from(paths[1:]))
        parent, key = _at(data, path[:-1]), path[-1]
        op = draw(st.sampled_from(["set", "set", "drop", "rename", "add"]))
        if op == "set":
            parent[key] = draw(nasty_values)
        elif op == "drop":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=12))] = parent.pop(key)
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=12))] = draw(nasty_values)
    return yaml.safe_dump(data, allow_unicode=draw(st.booleans()), sort_keys=False).encode("utf-8", "surrogatepass")


@st.composite
def appended_constructs(draw) -> bytes:
    construct = draw(
        st.sampled_from(
            [
                _bomb(draw(st.integers(2, 12))),
                b"x: " + b"[" * draw(st.integers(20, 5000)) + b"\n",
                b"x: &a [*a]\n",
                "".join(f"k{i}: {i}\n" for i in range(draw(st.integers(1, 8000)))).encode(),
                b"cluster: {training: {seed: " + b"7" * draw(st.integers(20, 6000)) + b"}}\n",
            ]
        )
    )
    return FILES[draw(st.sampled_from(NAMES))] + construct


mutants = st.one_of(byte_mutants(), value_mutants(), appended_constructs())


# --- the property ---------------------------------------------------------------------


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang(f"a load took more than {2 * HANG_S:g} s")


INTERNAL = re.compile(
    r"\b(\w+(Step|Entry|Spec|Policy)|Scenario|Timeouts|Explain|FaultStep|At(Step|Epoch|Seconds|BringUp)|ValidationError|Traceback)\b"
)
PATH = r"(\(top level\)|[A-Za-z0-9_-]+|'[^']*'|\"[^\"]*\")(\[\d+\]|\.([A-Za-z0-9_-]+|'[^']*'|\"[^\"]*\"))*"


def assert_names_a_position_or_a_field(message: str, source: str) -> None:
    lines = message.split("\n")
    first = lines[0]
    if re.fullmatch(re.escape(source) + r": \d+ problems:", first):
        assert 2 <= len(lines) <= 22, message
        problems = [line.removeprefix("  ") for line in lines[1:] if not re.fullmatch(r"  \.\.\. and \d+ more", line)]
    else:
        problems = [first]
    for line in problems:
        # 600 characters beside the list of valid fault names a line may end with (34 faults: ~480)
        assert line.isprintable() and len(line) <= 600 + len(", ".join(FAULTS.names())), line
        assert not INTERNAL.search(line), line
        positioned = re.match(re.escape(source) + r":\d+:\d+: ", line)
        rest = line[positioned.end() :] if positioned else line.removeprefix(f"{source}: ")
        assert positioned or re.match(PATH + ": ", rest), f"names neither a position nor a field: {line}"


def _load(tmp_path: Path, content: bytes):
    path = tmp_path / KILLED
    path.write_bytes(content)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 2 * HANG_S)
    started = time.perf_counter()
    try:
        try:
            return path, load_scenario(path), None
        except ScenarioError as exc:
            return path, None, exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        elapsed = time.perf_counter() - started
        assert elapsed < HANG_S, f"a load took {elapsed:.1f} s"
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
        assert grown < MAX_RSS_GROWTH_KB, f"peak memory grew by {grown / 1024:.0f} MB"


FUZZ = settings(
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    # No explain phase: it traces every line run, which makes a 1 s load take 10 s.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@settings(FUZZ, max_examples=EXAMPLES)
@given(content=mutants)  # and, below, an explicit example of each kind the issue found
def test_the_loader_rejects_every_mutant_clearly_or_accepts_a_valid_scenario(tmp_path, content):
    path, scenario, error = _load(tmp_path, content)
    if error is not None:
        assert error.hint, error.message
        assert_names_a_position_or_a_field(error.message, str(path))
        return
    # Accepted: it must be a scenario every consumer can use.
    assert scenario_from_dict(scenario.to_dict()) == scenario
    jsonschema.Draft202012Validator(schema.generate()).validate(scenario.to_dict())
    assert scenario.description.strip() and scenario.run_info().final_step >= 1
    assert all(isinstance(w, str) and w.isprintable() for w in scenario.warnings())


for _content in [
    *KNOWN_KINDS.values(),
    *FILES.values(),
    KILLED_TEXT.replace("max_restarts: 1", "max_restarts: 2").encode(),
]:
    test_the_loader_rejects_every_mutant_clearly_or_accepts_a_valid_scenario = example(content=_content)(
        test_the_loader_rejects_every_mutant_clearly_or_accepts_a_valid_scenario
    )


@pytest.mark.parametrize("kind", sorted(KNOWN_KINDS))
def test_each_kind_the_issue_found_is_rejected_clearly(tmp_path, kind):
    path, scenario, error = _load(tmp_path, KNOWN_KINDS[kind])
    assert scenario is None, f"{kind}: accepted"
    assert_names_a_position_or_a_field(error.message, str(path))


@settings(FUZZ, max_examples=max(EXAMPLES // 10, 10))
@given(content=mutants)
def test_a_bad_file_in_a_folder_does_not_stop_the_others(tmp_path_factory, content):
    folder = tmp_path_factory.mktemp("suite")
    good = "killed-chief-recovers-from-checkpoint.yaml"
    (folder / good).write_bytes(FILES[good])
    (folder / KILLED).write_bytes(content)
    scenarios, errors = load_many([folder])
    assert good in [s.source.name for s in scenarios]
    assert len(scenarios) + len(errors) == 2
