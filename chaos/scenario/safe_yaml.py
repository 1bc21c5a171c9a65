"""Read a scenario file's YAML into plain data, within limits, or say where it is wrong.

Any file must give data or a ``YamlProblem`` with its line and column, quickly
and in little memory; never a traceback. What that takes, besides PyYAML's
``SafeLoader`` (plain data only: no tag builds a Python object):

- **Bytes.** At most ``MAX_BYTES``, UTF-8 (a UTF-8 BOM is dropped; UTF-16 and
  UTF-32 are named); a stray byte is reported at its line and column.
- **Shape.** Nesting deeper than ``MAX_DEPTH`` is refused while composing (the
  composer recurses: about 250 levels end in RecursionError), and so are more
  than ``MAX_VALUES`` values, counted after aliases are expanded, and aliases
  that refer to the value they are in. A 500-byte "billion laughs" file expands
  to 10^9 values: it would be cheap to build (aliases share one object) but any
  walk over it, validation or a message that shows it, is exponential.
- **YAML 1.2 core schema.** Only ``true``/``false`` are booleans (YAML 1.1 reads
  ``on``, ``no``, ``y`` as booleans); integers are decimal, ``0o17`` or ``0x1f``;
  ``010`` is refused as ambiguous (octal 8 in YAML 1.1, 10 in YAML 1.2);
  ``1:30`` (sexagesimal 90 in YAML 1.1), ``1_000`` and dates stay text.
  Integers are at most ``MAX_INT_DIGITS`` digits; ``.inf``, ``.nan`` and numbers
  too large for a float are refused, since no field means "forever".
- **Keys** are text, given once; merge keys (``<<``) are refused: YAML 1.2 has
  none, editors' schema checks do not follow them, and a merged key silently
  overrides or is overridden, which is what the duplicate-key check is for.
- **Text** holds no control characters (other than tab and line break) and no
  bidi embedding/override/isolate characters: they would act on the terminal
  that shows a report, or make what is shown differ from what is read.
"""

from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from chaos.text import clean, shown

MAX_BYTES = 256 * 1024  # a shipped scenario is about 2 kB
MAX_DEPTH = 32  # a shipped scenario nests 6 deep
MAX_VALUES = 10_000  # after alias expansion; a shipped scenario has about 150
MAX_INT_DIGITS = 30

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
MERGE = "tag:yaml.org,2002:merge"
SCALAR_TAGS = {STR, INT, FLOAT, BOOL, NULL}

INT_RE = re.compile(r"^[-+]?(?:[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
FLOAT_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
NOT_FINITE_RE = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
BOOL_RE = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
NULL_RE = re.compile(r"^(?:~|null|Null|NULL|)$")
# Controls other than tab and line feed, DEL, C1 controls, bidi embeddings/overrides/isolates.
UNSAFE_TEXT_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

MERGE_REFUSED = "merge keys (<<) are not supported (YAML 1.2 has none); write the keys out"

_BOMS = [
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
]


@dataclass
class YamlProblem(Exception):
    """What is wrong and where: 1-based line and column."""

    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}"


def _at(mark: Any, message: str) -> YamlProblem:
    return YamlProblem(mark.line + 1, mark.column + 1, message)


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode(raw: bytes) -> str:
    """The file's text; YamlProblem for anything that is not UTF-8."""
    for bom, name in _BOMS:  # UTF-32 first: its LE BOM starts with UTF-16's
        if raw.startswith(bom):
            raise YamlProblem(1, 1, f"the file is {name} text; save it as UTF-8")
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = raw[: exc.start].decode("utf-8", errors="replace")
        line, column = _position(head, len(head))
        raise YamlProblem(
            line, column, f"byte 0x{raw[exc.start]:02x} is not UTF-8 text; save the file as UTF-8"
        ) from None


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars and limits on depth and size while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # The scanner reads a whole line ahead while a simple key is possible, and
        # each flow level costs it a pass over all open levels: stop it here, before
        # a line of 100,000 '[' costs seconds (the composer alone would stop it late).
        if self.flow_level >= MAX_DEPTH:
            raise _at(self.get_mark(), f"nested more than {MAX_DEPTH} levels deep; a scenario needs fewer than 10")
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        self._depth += 1
        self._nodes += 1
        if self._depth > MAX_DEPTH:
            raise _at(
                self.peek_event().start_mark,
                f"nested more than {MAX_DEPTH} levels deep; a scenario needs fewer than 10",
            )
        if self._nodes > MAX_VALUES:
            raise _at(self.peek_event().start_mark, f"more than {MAX_VALUES} values; a scenario needs a few hundred")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_Loader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in [
    (BOOL, BOOL_RE, "tTfF"),
    (INT, INT_RE, "-+0123456789"),
    (FLOAT, FLOAT_RE, "-+.0123456789"),
    (FLOAT, NOT_FINITE_RE, "-+."),
    (NULL, NULL_RE, ["~", "n", "N", ""]),
    (MERGE, re.compile(r"^<<$"), "<"),
]:
    _Loader.add_implicit_resolver(_tag, _regexp, list(_first))


def _int(loader: _Loader, node: ScalarNode) -> int:
    text = node.value
    if not INT_RE.match(text):  # only an explicit !!int gets here
        raise _at(node.start_mark, f"{shown(text)} is not a whole number")
    sign, digits = (text[0], text[1:]) if text[0] in "+-" else ("", text)
    if len(digits) > MAX_INT_DIGITS:
        raise _at(node.start_mark, f"a number of {len(digits)} digits is too long (at most {MAX_INT_DIGITS})")
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        raise _at(
            node.start_mark,
            f"{shown(text)} is ambiguous: YAML 1.1 reads a leading 0 as octal, YAML 1.2 as decimal; "
            f"write {sign}{digits.lstrip('0') or '0'} (or {sign}0o{digits.lstrip('0') or '0'} for octal)",
        )
    value = int(digits, 0)
    return -value if sign == "-" else value


def _float(loader: _Loader, node: ScalarNode) -> float:
    text = node.value
    if NOT_FINITE_RE.match(text):
        raise _at(node.start_mark, f"{text} is not a finite number; no field takes infinity or NaN")
    if not FLOAT_RE.match(text):
        raise _at(node.start_mark, f"{shown(text)} is not a number")
    value = float(text)
    if math.isinf(value):
        raise _at(node.start_mark, f"{shown(text)} is too large for a number")
    return value


def _bool(loader: _Loader, node: ScalarNode) -> bool:
    if not BOOL_RE.match(node.value):
        raise _at(node.start_mark, f"{shown(node.value)} is not a boolean; write true or false")
    return node.value.lower() == "true"


def _mapping(loader: _Loader, node: MappingNode) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        out[loader.construct_object(key_node)] = loader.construct_object(value_node)
    return out


def _sequence(loader: _Loader, node: SequenceNode) -> list[Any]:
    return [loader.construct_object(item) for item in node.value]


_Loader.yaml_constructors = dict(yaml.SafeLoader.yaml_constructors)
for _tag in list(_Loader.yaml_constructors):
    if _tag not in (STR, NULL) and _tag is not None:
        del _Loader.yaml_constructors[_tag]
_Loader.add_constructor(INT, _int)
_Loader.add_constructor(FLOAT, _float)
_Loader.add_constructor(BOOL, _bool)
_Loader.add_constructor(SEQ, _sequence)
_Loader.add_constructor(MAP, _mapping)


def _kind(node: Node) -> str:
    return {MappingNode: "a mapping", SequenceNode: "a list"}.get(type(node), "a value")


def _tag_refused(tag: str) -> str:
    short = "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag
    return f"the tag {shown(short)} is not supported here; a scenario holds plain text, numbers, lists and mappings"


def _check_scalar(node: ScalarNode) -> None:
    if node.tag == MERGE:
        raise _at(node.start_mark, MERGE_REFUSED)
    if node.tag not in SCALAR_TAGS:
        raise _at(node.start_mark, _tag_refused(node.tag))
    if node.tag == STR:
        bad = UNSAFE_TEXT_RE.search(node.value)
        if bad:
            raise _at(
                node.start_mark,
                f"text with the control character {clean(bad.group())} (a terminal escape, a carriage return "
                "or a bidi override) is not allowed; remove it",
            )


def _check_keys(node: MappingNode) -> None:
    seen: set[str] = set()
    for key, _ in node.value:
        if key.tag == MERGE:
            raise _at(key.start_mark, MERGE_REFUSED)
        if not isinstance(key, ScalarNode):
            raise _at(key.start_mark, f"a key must be text, not {_kind(key)}")
        if key.tag != STR:
            raise _at(key.start_mark, f"a key must be text, not {shown(key.value)}; quote it if it is meant as text")
        if key.value in seen:
            raise _at(key.start_mark, f"key {shown(key.value)} is given twice")
        seen.add(key.value)


def check_tree(root: Node) -> None:
    """Refuse cycles, too many values or too deep nesting after alias expansion, and bad scalars and keys.

    Iterative, and each node is visited once however often aliases repeat it."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            children = _children(node)
            size[key] = min(1 + sum(size[id(c)] for c in children), MAX_VALUES + 1)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            open_.discard(key)
            if depth[key] > MAX_DEPTH:
                raise _at(node.start_mark, f"aliases nest this value more than {MAX_DEPTH} levels deep")
            if size[key] > MAX_VALUES:
                raise _at(node.start_mark, f"aliases expand this value to more than {MAX_VALUES} values")
            continue
        if key in size:
            continue
        if key in open_:
            raise _at(node.start_mark, "an alias refers to the value it is part of")
        open_.add(key)
        if isinstance(node, ScalarNode):
            _check_scalar(node)
        elif isinstance(node, MappingNode):
            if node.tag != MAP:
                raise _at(node.start_mark, _tag_refused(node.tag))
            _check_keys(node)
        elif node.tag != SEQ:
            raise _at(node.start_mark, _tag_refused(node.tag))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def compose(text: str) -> Node | None:
    """The node tree of one YAML document; YamlProblem when it is not valid YAML or too big."""
    loader = None
    try:
        loader = _Loader(text)
        return loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        line, column = _position(text, exc.position)
        char = chr(exc.character) if isinstance(exc.character, int) else str(exc.character)
        hint = " (a NUL: is the file UTF-16? save it as UTF-8)" if char == "\x00" else ""
        raise YamlProblem(line, column, f"the character {clean(char)} is not allowed in YAML{hint}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not valid YAML"
        if exc.context and exc.context_mark and exc.problem:
            where = (
                f" at {exc.context_mark.line + 1}:{exc.context_mark.column + 1}" if exc.context_mark is not mark else ""
            )
            problem = f"{problem} ({exc.context}{where})"
        raise YamlProblem(
            mark.line + 1 if mark else 1, mark.column + 1 if mark else 1, f"not valid YAML: {clean(problem)}"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, 1, f"not valid YAML: {clean(str(exc))}") from None
    finally:
        if loader is not None:
            loader.dispose()


def construct(root: Node | None) -> Any:
    """Plain data from a tree ``check_tree`` accepted."""
    if root is None:
        return None
    loader = _Loader("")
    try:
        return loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise YamlProblem(
            mark.line + 1 if mark else 1, mark.column + 1 if mark else 1, clean(exc.problem or str(exc))
        ) from None
    finally:
        loader.dispose()


def read(text: str) -> tuple[Any, Node | None]:
    """(data, node tree) of ``text``; YamlProblem naming the line and column of what is wrong."""
    root = compose(text)
    if root is not None:
        check_tree(root)
    return construct(root), root


def position(root: Node | None, loc: tuple, at_key: bool = False) -> tuple[int, int] | None:
    """1-based (line, column) of the value at ``loc`` (keys and list indices), of its key
    with ``at_key``, or of the deepest part of ``loc`` the file has."""
    if root is None:
        return None
    node = root
    for i, item in enumerate(loc):
        if isinstance(node, MappingNode):
            pair = next(((k, v) for k, v in node.value if isinstance(k, ScalarNode) and k.value == item), None)
            if pair is None:
                break
            node = pair[0] if at_key and i == len(loc) - 1 else pair[1]
        elif isinstance(node, SequenceNode) and isinstance(item, int) and 0 <= item < len(node.value):
            node = node.value[item]
        else:
            break
    return node.start_mark.line + 1, node.start_mark.column + 1
