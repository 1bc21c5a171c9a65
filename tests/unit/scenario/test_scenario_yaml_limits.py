"""Bad scenario files are rejected with their line and column, quickly and in little
memory: encodings, nesting, aliases, keys, numbers, tags, control characters."""

import codecs
import time
import tracemalloc

import pytest

from chaos.errors import ScenarioError
from chaos.scenario import safe_yaml
from chaos.scenario.loader import load_scenario

HEAD = "name: x\ndescription: d\nexplain: {symptom: s, cause: c, fix: f}\n"
POSITION = r"x\.yaml:\d+:\d+: "


def rejected(tmp_path, content, pattern):
    """Load ``content`` as x.yaml; the error must match ``pattern`` and is returned."""
    path = tmp_path / "x.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.hint
    message = caught.value.message
    assert __import__("re").search(pattern, message), message
    return message


def bomb(levels: int = 9, width: int = 9) -> str:
    """The "billion laughs": each level lists the previous one ``width`` times."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return HEAD + "\n".join(lines) + "\n"


# --- encodings ------------------------------------------------------------------------


def test_a_byte_that_is_not_utf8_is_reported_at_its_line_and_column(tmp_path):
    rejected(
        tmp_path,
        HEAD.encode() + b"cluster: {workers: 2\xff}\n",
        POSITION.replace(r"\d+:\d+", "4:21") + "byte 0xff is not UTF-8",
    )


@pytest.mark.parametrize("codec, name", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_utf16_and_utf32_files_are_named(tmp_path, codec, name):
    rejected(tmp_path, HEAD.encode(codec), rf"x\.yaml:1:1: the file is {name} text; save it as UTF-8")


def test_utf16_without_a_bom_is_caught_by_its_nul_bytes(tmp_path):
    rejected(
        tmp_path,
        HEAD.encode("utf-16-le"),
        POSITION + r"the character \\x00 is not allowed in YAML \(a NUL: is the file UTF-16",
    )


def test_a_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_bytes(codecs.BOM_UTF8 + HEAD.encode())
    assert load_scenario(path).name == "x"


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    rejected(tmp_path, HEAD + "#" * safe_yaml.MAX_BYTES, r"x\.yaml: more than 256 KiB")


# --- shape ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "{a: " * 300 + "1" + "}" * 300,
        "x: " + "[" * 100_000,
        "x:\n" + "".join("  " * i + "- \n" for i in range(1, 300)),
    ],
)
def test_deep_nesting_is_refused_at_its_position_without_recursion_error(tmp_path, text):
    rejected(tmp_path, HEAD + text + "\n", POSITION + "nested more than 32 levels deep")


def test_nesting_through_an_alias_chain_is_refused(tmp_path):
    chain = "a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 60))
    rejected(tmp_path, HEAD + chain, POSITION + "aliases nest this value more than 32 levels deep")


def test_an_alias_bomb_is_refused_fast_and_small(tmp_path):
    text = bomb()
    assert len(text) < 700  # expands to 9**9 = 387 million values
    tracemalloc.start()
    started = time.perf_counter()
    try:
        message = rejected(tmp_path, text, POSITION + "aliases expand this value to more than 10000 values")
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - started < 2 and peak < 20e6
    assert "lol" not in message  # nothing of the value is rendered


def test_an_alias_to_the_value_it_is_in_is_refused(tmp_path):
    rejected(tmp_path, HEAD + "cluster: &c {training: *c}\n", POSITION + "an alias refers to the value it is part of")


def test_aliases_within_the_limits_still_work(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("name: x\ndescription: &d same text\nexplain: {symptom: *d, cause: *d, fix: *d}\n")
    assert load_scenario(path).explain.fix == "same text"


def test_too_many_values_are_refused(tmp_path):
    rejected(tmp_path, HEAD + "x: [" + "1, " * 20_000 + "1]\n", POSITION + "more than 10000 values")


# --- keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("? [a, b]\n: 1\n", r"x\.yaml:4:3: a key must be text, not a list"),
        ("? {a: 1}\n: 1\n", r"x\.yaml:4:3: a key must be text, not a mapping"),
        ("1: 2\n", r"x\.yaml:4:1: a key must be text, not '1'; quote it"),
        ("~: 2\n", r"x\.yaml:4:1: a key must be text, not '~'"),
        ("name: x\n", r"x\.yaml:4:1: key 'name' is given twice"),
    ],
)
def test_keys_are_text_given_once(tmp_path, text, expected):
    rejected(tmp_path, HEAD + text, expected)


def test_merge_keys_are_refused_with_a_clear_message(tmp_path):
    message = rejected(
        tmp_path,
        HEAD + "base: &b {workers: 2}\ncluster: {<<: *b}\n",
        r"x\.yaml:5:11: merge keys \(<<\) are not supported",
    )
    assert "constructor" not in message and "tag:yaml.org" not in message


# --- numbers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        ("9" * 5000, "a number of 5000 digits is too long"),
        ("010", r"'010' is ambiguous: YAML 1\.1 reads a leading 0 as octal, YAML 1\.2 as decimal; write 10"),
        (".inf", r"\.inf is not a finite number"),
        ("-.inf", r"-\.inf is not a finite number"),
        (".nan", r"\.nan is not a finite number"),
        ("1e999", "'1e999' is too large for a number"),
        ("!!int abc", "'abc' is not a whole number"),
        ("!!float abc", "'abc' is not a number"),
        ("!!bool yes", "'yes' is not a boolean"),
    ],
)
def test_numbers_outside_yaml_1_2_core_or_the_limits_are_refused(tmp_path, value, expected):
    rejected(tmp_path, HEAD + f"cluster: {{training: {{seed: {value}}}}}\n", POSITION + expected)


@pytest.mark.parametrize(
    "value, expected",
    [
        (
            "1:30",
            r"cluster\.training\.seed: must be a whole number; got the text '1:30' \(YAML 1\.1 read this as base 60, 90",
        ),
        ("1_000", r"cluster\.training\.seed: must be a whole number; got the text '1_000'"),
        ("2024-01-01", r"cluster\.training\.seed: must be a whole number; got the text '2024-01-01'"),
        ("0b101", r"cluster\.training\.seed: must be a whole number; got the text '0b101'"),
    ],
)
def test_yaml_1_1_number_forms_stay_text(tmp_path, value, expected):
    rejected(tmp_path, HEAD + f"cluster: {{training: {{seed: {value}}}}}\n", r"x\.yaml:4:28: " + expected)


def test_yaml_1_2_core_numbers_are_read(tmp_path):
    assert safe_yaml.read("a: 0x1F\nb: -0o17\nc: 1e3\nd: +5\ne: .5\nf: 0\ng: -0\n")[0] == {
        "a": 31,
        "b": -15,
        "c": 1000.0,
        "d": 5,
        "e": 0.5,
        "f": 0,
        "g": 0,
    }


# --- tags and text --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system [x]",
        "!!binary aGVsbG8=",
        "!!set {a}",
        "!!timestamp 2024-01-01",
        "!custom 1",
        "!!seq x",
    ],
)
def test_tags_other_than_the_core_ones_are_refused(tmp_path, text):
    rejected(tmp_path, HEAD + f"x: {text}\n", POSITION + "the tag '.*' is not supported here")


@pytest.mark.parametrize(
    "value, shown",
    [
        (r'"\e[2K\rok: fake"', r"\\x1b"),
        (r'"a\rb"', r"\\x0d"),
        (r'"a\x00b"', r"\\x00"),
        ('"a\u202eb"', r"\\u202e"),
        ('"a\u2066b"', r"\\u2066"),
        (r'"a\x85b"', r"\\x85"),
    ],
)
def test_control_and_bidi_characters_in_text_are_refused_and_shown_escaped(tmp_path, value, shown):
    message = rejected(
        tmp_path,
        f"name: x\ndescription: {value}\nexplain: {{symptom: s, cause: c, fix: f}}\n",
        r"x\.yaml:2:14: text with the control character " + shown,
    )
    assert message.isprintable()


def test_raw_control_characters_are_reported_by_line_and_column(tmp_path):
    rejected(tmp_path, HEAD + "x: a\x01b\n", r"x\.yaml:4:5: the character \\x01 is not allowed in YAML")


def test_tabs_and_line_breaks_in_text_are_fine(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text('name: x\ndescription: "a\\tb\\nc"\nexplain: {symptom: s, cause: c, fix: f}\n')
    assert load_scenario(path).description == "a\tb\nc"


@pytest.mark.parametrize(
    "text, expected",
    [
        (HEAD + "a: [1\n", r"x\.yaml:5:1: not valid YAML: .*"),
        (
            HEAD + 'a: "abc\n',
            r"x\.yaml:5:1: not valid YAML: found unexpected end of stream \(while scanning a quoted scalar at 4:4\)",
        ),
        (HEAD + "---\nb: 1\n", r"x\.yaml:4:1: not valid YAML: but found another document"),
        (HEAD + "a:\n\t- 1\n", r"x\.yaml:5:1: not valid YAML: found character '\\t' that cannot start any token"),
    ],
)
def test_syntax_errors_name_line_and_column(tmp_path, text, expected):
    rejected(tmp_path, text, expected)
