"""Turn validation errors into messages an engineer can act on.

Each ``Problem`` names the field path as written in YAML
(``faults[0].kill_worker.worker``), says what is wrong in YAML words ("must be
a whole number; got the text '3'"), the valid values or keys, and a close match
("did you mean 'latency'?"). Pydantic's raw locations include the tags of our
tagged unions and the labels of plain unions; the walk below drops them by
following the model's own types, so a path never shows an internal class name.
Whatever the file gave is echoed through ``chaos.text`` (escaped,
shortened before rendering).
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError

from chaos.errors import ScenarioError
from chaos.faults import FAULTS
from chaos.registry import did_you_mean
from chaos.text import clean, key_text, kind_of, shown

HINT = "docs/scenarios.md describes the format; `chaos list` shows every fault and check with its parameters"
MAX_REPORTED = 20  # problems listed per file; the rest are counted

# What a tagged union holds, by the top-level list it is in.
NOUNS = {"faults": "fault", "expect": "symptom check", "recover": "recovery check"}
BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
TRIGGER_HELP = "bring_up, {step: N}, {epoch: N} or {seconds: S}"
# What a type error expected, in YAML words.
EXPECTED = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "text",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "dataclass_type": "a mapping (key: value)",
}
PATTERNS = {
    r"^[a-z0-9]+(-[a-z0-9]+)*$": "kebab-case: lowercase letters and digits, words joined by '-'",
    r"^\d+\.\d+(\.\d+)?$": "a version like '2.18' (quoted)",
}
_SEXAGESIMAL = re.compile(r"^[0-9]{1,6}(:[0-5]?[0-9]){1,3}$")
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")

Loc = tuple[str | int, ...]


def format_path(loc: Loc) -> str:
    """``faults[0].kill_worker.worker``; a key that is not a plain word is quoted and escaped."""
    out = ""
    for item in loc:
        if isinstance(item, int) and not isinstance(item, bool):
            out += f"[{item}]"
        else:
            key = key_text(item)
            out += f".{key}" if out else key
    return out or "(top level)"


@dataclass(frozen=True)
class Problem:
    """One problem: where (keys and list indices, as in the file) and what."""

    loc: Loc
    message: str
    at_key: bool = False  # the key itself is wrong (unknown key): point at it, not at its value

    @property
    def path(self) -> str:
        return format_path(self.loc)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


Positions = Callable[[Problem], "tuple[int, int] | None"]


def render(
    problems: list[Problem], source: str | None = None, more: int = 0, positions: Positions | None = None
) -> str:
    """``file:line:col: path: message`` for one problem; a count and one such line each for several."""

    def line(problem: Problem) -> str:
        where = positions(problem) if positions else None
        prefix = f"{source}:{where[0]}:{where[1]}: " if source and where else ""
        return clean(prefix + str(problem))

    total = len(problems) + more
    if total == 1:
        text = line(problems[0])
        return text if text.startswith(f"{source}:") or not source else f"{source}: {text}"
    lines = [line(p) for p in problems]
    if more:
        lines.append(f"... and {more} more")
    head = f"{total} problems:"
    return (f"{source}: {head}" if source else head) + "\n" + "\n".join(f"  {x}" for x in lines)


class ScenarioProblems(ScenarioError):
    """Every problem found in one scenario (``problems``; ``more`` not listed)."""

    def __init__(
        self,
        problems: list[Problem],
        *,
        more: int = 0,
        source: str | None = None,
        positions: Positions | None = None,
        hint: str = HINT,
    ) -> None:
        super().__init__(render(problems, source, more, positions), hint=hint)
        self.problems = problems
        self.more = more


def _unwrap(tp: Any) -> tuple[Any, dict[str, Any] | None]:
    """Strip Annotated and Optional; a tagged union comes back with its members by tag."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
            continue
        if origin in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            tagged = {
                m.tag: get_args(a)[0]
                for a in args
                if hasattr(a, "__metadata__")
                for m in a.__metadata__
                if isinstance(m, Tag)
            }
            if tagged:
                return tp, tagged
            if len(args) == 1:
                tp = args[0]
                continue
        return tp, None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _field(model: type[BaseModel], key: str) -> tuple[str, Any] | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.alias or name, info.annotation
    return None


def walk(root: type[BaseModel], loc: tuple) -> tuple[Loc, Any]:
    """(the location as written in the file, the type found at the end of pydantic's ``loc``)."""
    tp: Any = root
    out: list[str | int] = []
    for item in loc:
        core, tagged = _unwrap(tp)
        if tagged is not None and item in tagged:
            tp = tagged[item]  # a union tag: pydantic's, not the user's
            continue
        if tagged is None and get_origin(core) in (Union, types.UnionType) and isinstance(item, str):
            continue  # a plain union's member label ('int', "literal['nonzero']")
        if isinstance(item, int) and not _is_model(core):  # a list index (a model has only text keys)
            out.append(item)
            args = get_args(core)
            tp = args[-1] if args else Any
            continue
        found = _field(core, str(item)) if _is_model(core) else None
        if found:
            name, tp = found
        else:
            args = get_args(core)
            name, tp = str(item), (args[-1] if get_origin(core) is dict and args else Any)
        out.append(name)
    return tuple(out), tp


def _keys(model: Any) -> list[str]:
    if _is_model(model):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _tag_problem(loc: Loc, error: dict, tags: list[str]) -> Problem:
    top = loc[0] if loc else ""
    if loc and loc[-1] in ("at", "until"):
        noun, valid = "trigger", TRIGGER_HELP
    else:
        noun, valid = NOUNS.get(str(top), "kind"), ", ".join(tags)
    if error["type"] == "union_tag_not_found":
        value = error.get("input")
        if noun == "trigger" and isinstance(value, dict) and len(value) > 1:
            return Problem(
                loc,
                f"give one trigger, not {len(value)} ({', '.join(key_text(k) for k in list(value)[:4])}); valid: {valid}",
            )
        return Problem(loc, f"names no {noun} (got {kind_of(value)}); expected one of: {valid}")
    tag = error["ctx"]["tag"]
    if noun == "fault" and tag in FAULTS.planned:
        return Problem(loc, f"fault {shown(tag)} is planned but not implemented yet; valid: {valid}")
    return Problem(loc, f"unknown {noun} {shown(tag)}; valid: {valid}{did_you_mean(tag, tags)}")


def _type_problem(loc: Loc, kind: str, value: Any) -> Problem:
    expected = EXPECTED[kind]
    advice = ""
    if isinstance(value, str) and expected in ("a whole number", "a number") and _NUMBER_TEXT.match(value):
        advice = " (remove the quotes)"
    elif isinstance(value, str) and expected in ("a whole number", "a number") and _SEXAGESIMAL.match(value):
        seconds = 0
        for part in value.split(":"):
            seconds = seconds * 60 + int(part)
        advice = f" (YAML 1.1 read this as base 60, {seconds}; YAML 1.2 reads it as text: write {seconds})"
    elif expected == "text" and isinstance(value, (int, float)) and not isinstance(value, bool):
        advice = " (quote it)"
    elif expected == "a whole number" and isinstance(value, float) and value.is_integer():
        advice = f" (write {int(value)})"
    return Problem(loc, f"must be {expected}; got {kind_of(value)}{advice}")


def describe(error: dict, root: type[BaseModel]) -> Problem:
    kind = error["type"]
    loc, tp = walk(root, tuple(error["loc"]))
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        parent_loc, parent = walk(root, tuple(error["loc"])[:-1])
        keys = _keys(_unwrap(parent)[0])
        if not keys:
            owner = next((str(k) for k in reversed(parent_loc) if isinstance(k, str)), "this")
            return Problem(loc, f"unknown key; {owner} takes no parameters (write {owner}: {{}})", at_key=True)
        return Problem(loc, f"unknown key; valid keys: {', '.join(keys)}{did_you_mean(loc[-1], keys)}", at_key=True)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        _, tagged = _unwrap(tp)
        return _tag_problem(loc, error, list(tagged or []))
    if kind == "literal_error":
        valid = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return Problem(loc, f"{shown(value)} is not valid; valid: {', '.join(valid)}{did_you_mean(value, valid)}")
    if kind == "missing":
        return Problem(loc, "required")
    if kind in BOUNDS:
        bound = next(iter(ctx.values()))
        return Problem(loc, f"must be {BOUNDS[kind]} {bound} (got {shown(value)})")
    if kind in EXPECTED:
        return _type_problem(loc, kind, value)
    if kind == "invalid_key":
        return Problem(loc, f"a key must be text (got {kind_of(value)})", at_key=True)
    if kind == "string_too_short":
        return Problem(loc, "must not be empty")
    if kind == "string_too_long":
        return Problem(
            loc,
            f"must be at most {ctx.get('max_length')} characters (got {len(value) if isinstance(value, str) else '?'})",
        )
    if kind == "too_short":
        least = ctx.get("min_length", 1)
        return Problem(loc, f"must list at least {'one item' if least == 1 else f'{least} items'} (got {shown(value)})")
    if kind == "too_long":
        return Problem(loc, f"must list at most {ctx.get('max_length')} (got {ctx.get('actual_length', '?')})")
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        return Problem(loc, f"must be {PATTERNS.get(pattern, 'text matching ' + pattern)} (got {shown(value)})")
    if kind in ("value_error", "assertion_error"):
        message = clean(error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, "))
        return Problem(loc, message if "got " in message else f"{message} (got {shown(value)})")
    return Problem(loc, f"is not valid here (got {shown(value)})")  # pydantic's own words may name internal types


def problems_of(exc: ValidationError, root: type[BaseModel], limit: int = MAX_REPORTED) -> tuple[list[Problem], int]:
    """(up to ``limit`` distinct problems, how many more there are). Linear in the number of errors."""
    shown_: dict[str, Problem] = {}
    described: set[tuple] = set()
    rest: set[tuple] = set()
    for error in exc.errors(include_url=False):
        key = (tuple(map(str, error["loc"])), error["type"])
        if key in described or key in rest:
            continue
        if len(shown_) < limit:
            described.add(key)
            problem = describe(error, root)
            shown_.setdefault(str(problem), problem)
        else:
            rest.add(key)
    return list(shown_.values()), len(rest)
