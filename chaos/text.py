"""Echo what a scenario file holds, safely: escaped and short.

A file can hold anything: terminal escape sequences, right-to-left overrides, a
line break that starts a fake ``ok:`` line, a value of a megabyte, a structure
repeated through aliases. Whatever of it a message or a listing shows goes
through ``shown`` (a value, YAML-spelled) or ``clean`` (text). Both bound their
work before rendering anything, and escape every character a terminal would act
on or hide (``str.isprintable`` is false for controls, bidi marks, line breaks).
"""

from __future__ import annotations

import re
from typing import Any

SHOWN_CHARS = 60  # a shown value: enough to recognise it
# One line of a message or listing: room for "unknown fault ...; valid: <every
# registered name>; did you mean ...?" after a long file path (23 faults: ~530 chars).
CLEAN_CHARS = 1000
_ITEMS = 4  # items of a list or mapping shown before "..."
_DEPTH = 3  # nesting shown before "..."
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,40}")


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def clean(text: str, limit: int = CLEAN_CHARS) -> str:
    """``text`` on one line with every unprintable character escaped, at most ``limit`` characters."""
    head = text[: limit + 1]
    out = "".join(c if c.isprintable() else _escape(c) for c in head)
    return out if len(out) <= limit and len(text) <= limit else out[: limit - 3] + "..."


def first_line(text: str, limit: int = 240) -> str:
    """The first non-blank line of ``text``, cleaned and cut to ``limit``: a job's error in one
    line (a TF error's message can carry a whole tensor; the worker log keeps it all)."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    more = line != text.strip()
    out = clean(line.strip(), limit)
    return out + (" ..." if more and not out.endswith("...") else "")


def _text(value: str, limit: int) -> str:
    """Quoted as Python does (escapes for controls, bidi marks, backslashes), cut inside the quotes."""
    room = max(limit - 5, 8)
    if len(value) <= room:
        return repr(value)
    head = repr(value[:room])
    return head[:-1] + "..." + head[-1]


def _number(value: int) -> str:
    if value.bit_length() > 200:  # str() of a huge int is slow, and refused past 4300 digits
        return f"{'-' if value < 0 else ''}<a number of about {int(value.bit_length() * 0.30103)} digits>"
    return str(value)


def _render(value: Any, depth: int, limit: int) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return _number(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _text(value, limit)
    if isinstance(value, (list, tuple)):
        if depth >= _DEPTH:
            return "[...]" if value else "[]"
        items = [_render(v, depth + 1, limit) for v in value[:_ITEMS]]
        return "[" + ", ".join(items + (["..."] if len(value) > _ITEMS else [])) + "]"
    if isinstance(value, dict):
        if depth >= _DEPTH:
            return "{...}" if value else "{}"
        pairs = []
        for i, (k, v) in enumerate(value.items()):
            if i == _ITEMS:
                pairs.append("...")
                break
            pairs.append(f"{key_text(k)}: {_render(v, depth + 1, limit)}")
        return "{" + ", ".join(pairs) + "}"
    return clean(f"<{type(value).__name__}>", limit)  # a Python object given in Python: its kind, not its contents


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A value as YAML would spell it (``'text'``, ``true``, ``null``, ``[1, 2]``), escaped and at most ``limit`` characters."""
    text = _render(value, 0, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: Any) -> str:
    """A mapping key in a field path: as written when it is a plain word, else quoted and escaped."""
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return key
    return shown(key, 40)


def kind_of(value: Any) -> str:
    """What a value is, in YAML words: ``a list``, ``the text 'x'``, ``the number 3``."""
    if value is None:
        return "nothing (null)"
    if value is True or value is False:
        return shown(value)
    if isinstance(value, (int, float)):
        return f"the number {shown(value)}"
    if isinstance(value, str):
        return f"the text {shown(value)}"
    if isinstance(value, (list, tuple)):
        return f"a list {shown(value)}"
    if isinstance(value, dict):
        return f"a mapping {shown(value)}"
    return shown(value)


def compiled_regex(value: str) -> str:
    """A pydantic validator: ``value`` must be a regular expression Python compiles."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return value
