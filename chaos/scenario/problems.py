"""Turn pydantic's validation errors into messages an engineer can act on.

Each message names the field path as written in YAML (``faults[0].kill_worker.worker``),
the valid values or keys, and a close match ("did you mean 'latency'?").
Pydantic's raw locations include the tags of our tagged unions; the walk
below drops them by following the model's own types.
"""

from __future__ import annotations

import re
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError

from chaos.faults import FAULTS
from chaos.scenario.registry import did_you_mean

# What a tagged union holds, by the top-level list it is in.
NOUNS = {"faults": "fault", "expect": "symptom check", "recover": "recovery check"}
BOUNDS = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}
TRIGGER_HELP = "bring_up, {step: N}, {epoch: N} or {seconds: S}"


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


def _field(model: type[BaseModel], key: str) -> tuple[str, Any] | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.alias or name, info.annotation
    return None


def walk(root: type[BaseModel], loc: tuple) -> tuple[str, Any]:
    """(display path, the type found at the end of ``loc``)."""
    tp: Any = root
    path = ""
    for item in loc:
        core, tagged = _unwrap(tp)
        if tagged is not None and item in tagged:
            tp = tagged[item]  # a union tag: pydantic's, not the user's
            continue
        if isinstance(item, int):
            path += f"[{item}]"
            args = get_args(core)
            tp = args[-1] if args else Any
            continue
        found = _field(core, str(item)) if isinstance(core, type) and issubclass(core, BaseModel) else None
        name, tp = found if found else (str(item), Any)
        path += f".{name}" if path else name
    return path or "(top level)", tp


def _keys(model: Any) -> list[str]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [info.alias or name for name, info in model.model_fields.items()]
    return []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _tag_message(path: str, error: dict, tags: list[str]) -> str:
    top = path.split("[", 1)[0].split(".", 1)[0]
    if path.endswith((".at", ".until")):
        noun, valid = "trigger", TRIGGER_HELP
    else:
        noun, valid = NOUNS.get(top, "kind"), ", ".join(tags)
    if error["type"] == "union_tag_not_found":
        return f"{path}: names no {noun}; expected one of: {valid}"
    tag = error["ctx"]["tag"]
    if noun == "fault" and tag in FAULTS.planned:
        return f"{path}: fault {tag!r} is planned but not implemented yet; valid: {valid}"
    return f"{path}: unknown {noun} {tag!r}; valid: {valid}{did_you_mean(tag, tags)}"


def describe(error: dict, root: type[BaseModel]) -> str:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        parent_path, parent = walk(root, loc[:-1])
        core, _ = _unwrap(parent)
        keys = _keys(core)
        path = walk(root, loc)[0]
        return f"{path}: unknown key; valid keys: {', '.join(keys)}{did_you_mean(loc[-1], keys)}"
    path, tp = walk(root, loc)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        _, tagged = _unwrap(tp)
        return _tag_message(path, error, list(tagged or []))
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        valid = re.findall(r"'([^']*)'", expected)
        return f"{path}: {_short(error['input'])} is not valid; valid: {', '.join(valid)}{did_you_mean(error['input'], valid)}"
    if kind == "missing":
        return f"{path}: required"
    if kind in BOUNDS:
        ((_, bound),) = error["ctx"].items()
        return f"{path}: must be {BOUNDS[kind]} {bound} (got {_short(error['input'])})"
    message = error["msg"].removeprefix("Value error, ")
    if "got " in message:  # our own validators already say what they got
        return f"{path}: {message}"
    return f"{path}: {message} (got {_short(error['input'])})"


def problems_of(exc: ValidationError, root: type[BaseModel]) -> list[str]:
    seen: list[str] = []
    for error in exc.errors():
        text = describe(error, root)
        if text not in seen:
            seen.append(text)
    return seen
