"""The entries known from the field as data files (field/<name>.yaml, read by
chaos.diagnose.field_loader): every shipped file loads, the catalogue holds one
entry per file in the files' order, and a file that is wrong is one error that
names the file, the line, the key and what is valid, never a traceback."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from chaos.cli import main
from chaos.diagnose import field
from chaos.diagnose.families import FAMILIES
from chaos.diagnose.field_loader import KINDS, FieldFileError, load_field_entries, load_field_file
from chaos.diagnose.signatures import FieldExitSignature, ShapeSignature
from chaos.diagnose.tfconfig import SingleHostClusterSignature, TfConfigMistakeSignature
from chaos.diagnose.trends import BringUpShapeSignature, LossExplodesSignature
from chaos.resources import builtin_field_dir
from chaos.scenario import safe_yaml

ROOT = Path(__file__).resolve().parents[3]
FIELD = ROOT / "field"
FILES = sorted(FIELD.glob("*.yaml"))
EXAMPLE = FIELD / "field-grpc-message-limit.yaml"
LOGS = Path(__file__).parent / "logs"


def test_the_checkout_reads_the_root_folder():
    assert builtin_field_dir() == FIELD and len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_shipped_file_loads(path):
    entry = load_field_file(path)
    assert entry.name == path.stem and entry.family in FAMILIES
    failure = entry.known_failure()
    assert failure.from_field and failure.sources and failure.diagnosable and not failure.command


def test_the_entries_are_the_files_in_their_order():
    entries = field.field_entries()
    orders = {p.stem: safe_yaml.read(p.read_text(encoding="utf-8"))[0]["order"] for p in FILES}
    assert len(entries) == len(FILES) == len(set(orders.values()))
    assert [e.name for e in entries] == sorted(orders, key=orders.get)
    assert entries == load_field_entries(FIELD)


def _entry_with(tmp_path: Path, signatures: str) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    text = re.sub(r"signatures:\n(  .*\n)+", "signatures:\n" + signatures, text)
    path = tmp_path / EXAMPLE.name
    path.write_text(text, encoding="utf-8")
    return path


def test_each_kind_builds_its_signature_with_the_weight_as_written(tmp_path):
    path = _entry_with(
        tmp_path,
        "  - {kind: shape, shapes: [grpc_limit, nccl_warn], weight: 4, why: a}\n"
        "  - {kind: bring_up_shape, shapes: [connection_refused], weight: 1.5, why: b}\n"
        "  - {kind: exit, code: 137}\n"
        "  - {kind: exit, code: nonzero, oom_killed: true}\n"
        "  - {kind: tf_config_mistake, weight: 3.0}\n"
        "  - {kind: single_host_cluster, weight: 4.0}\n"
        "  - {kind: loss_explodes, weight: 3.0}\n",
    )
    signatures = load_field_file(path).known_failure().signatures
    assert signatures == (
        ShapeSignature(("grpc_limit", "nccl_warn"), 4, "a"),
        BringUpShapeSignature(("connection_refused",), 1.5, "b"),
        FieldExitSignature(137),
        FieldExitSignature("nonzero", True),
        TfConfigMistakeSignature(3.0),
        SingleHostClusterSignature(4.0),
        LossExplodesSignature(3.0),
    )
    assert [type(s.weight) for s in signatures[:2]] == [int, float]  # 4 stays 4, as the Python literals had it


def _replace(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


def _drop_key(key: str):
    return lambda text: re.sub(rf"{key}: >-\n(  .*\n)+", "", text)


# (what is wrong, the edit, what the message says: the key and the valid values)
MALFORMED = [
    (
        "unknown signature kind",
        _replace("  - kind: shape", "  - kind: shap"),
        ["signatures[0]: unknown kind 'shap'", "valid: shape, bring_up_shape, exit", "did you mean 'shape'?"],
    ),
    (
        "no kind",
        _replace("  - kind: shape\n    shapes", "  - shapes"),
        ["signatures[0]: names no kind", "shape, bring_up_shape, exit, tf_config_mistake"],
    ),
    (
        "unknown key",
        _replace("description:", "descripton:"),
        ["descripton: unknown key; valid keys: name, order, family", "did you mean 'description'?"],
    ),
    (
        "unknown key in a signature",
        _replace("    weight: 6\n", "    weight: 6\n    weigth: 6\n"),
        ["signatures[0].weigth: unknown key; valid keys: kind, shapes, weight, why"],
    ),
    ("missing field", _drop_key("cause"), [":1:1: cause: required"]),
    (
        "missing field in a signature",
        _replace("    why: a gRPC/protobuf message size limit was hit\n", ""),
        ["signatures[0].why: required"],
    ),
    (
        "wrong type",
        _replace("order: 60", "order: sixty"),
        [":2:8: order: must be a whole number; got the text 'sixty'"],
    ),
    ("wrong type of weight", _replace("weight: 6", 'weight: "6"'), ["signatures[0].weight: must be a number > 0"]),
    (
        "unknown family",
        _replace("family: transport", "family: transprot"),
        ["family: 'transprot' is not valid; valid: tf_config, port_blocked", "did you mean 'transport'?"],
    ),
    (
        "unknown shape",
        _replace("[grpc_limit]", "[grpc_limt]"),
        ["signatures[0].shapes[0]: not a line shape of chaos/diagnose/shapes.py", "did you mean 'grpc_limit'?"],
    ),
    (
        "a key of another kind",
        _replace("  - kind: shape\n", "  - kind: exit\n    code: 137\n  - kind: shape\n    code: 137\n"),
        ["signatures[1].code: unknown key; valid keys: kind, shapes, weight, why"],
    ),
    (
        "bad exit code",
        _replace("  - kind: shape\n", "  - {kind: exit, code: 0}\n  - kind: shape\n"),
        ["signatures[0].code: must be an exit code (a whole number, not 0) or 'nonzero' (got 0)"],
    ),
    ("no signature", lambda t: re.sub(r"signatures:\n(  .*\n)+", "signatures: []\n", t), ["signatures: must list"]),
    ("a source that is no address", _replace("- https://github.com", "- github.com"), ["sources[0]: must be"]),
    (
        "blank text",
        lambda t: _drop_key("fix")(t).replace("cause:", 'fix: " "\ncause:', 1),
        ["fix: must not be blank"],
    ),
    ("not YAML", _replace("family: transport", "family: [transport"), ["not valid YAML"]),
    ("not a mapping", lambda t: "- a\n- b\n", [":1:1: a field entry is a mapping"]),
    ("empty", lambda t: "", [":1:1: a field entry is a mapping", "the file is empty"]),
    ("a name that is not the file's", _replace("name: field-grpc-message-limit", "name: field-grpc"), [":1:7: name:"]),
]


@pytest.mark.parametrize("edit, expected", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_is_one_clear_error(tmp_path, edit, expected):
    path = tmp_path / EXAMPLE.name
    path.write_text(edit(EXAMPLE.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(FieldFileError) as info:
        load_field_file(path)
    message = info.value.message
    assert message.startswith(str(path)) and info.value.path == path and info.value.hint, message
    for part in expected:
        assert part in message, message
    assert "Traceback" not in message and "pydantic" not in message.lower() and "_Shape" not in message


def _folder(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "field"
    folder.mkdir()
    for name in names:
        shutil.copy(FIELD / f"{name}.yaml", folder)
    return folder


def test_two_entries_of_one_order_are_an_error(tmp_path):
    folder = _folder(tmp_path, "field-grpc-message-limit", "field-host-out-of-memory")
    path = folder / "field-host-out-of-memory.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("order: 20", "order: 60"), encoding="utf-8")
    with pytest.raises(FieldFileError) as info:
        load_field_entries(folder)
    assert "field-host-out-of-memory.yaml: order: 60 is also the order of" in info.value.message
    assert "field-grpc-message-limit.yaml" in info.value.message


def test_every_bad_file_is_named_at_once(tmp_path):
    folder = _folder(tmp_path, "field-grpc-message-limit")
    (folder / "a.yaml").write_text("")
    (folder / "b.yaml").write_text("name: b\n")
    with pytest.raises(FieldFileError) as info:
        load_field_entries(folder)
    assert "a.yaml:1:1: a field entry is a mapping" in info.value.message
    assert "b.yaml: 8 problems:" in info.value.message and "b.yaml:1:1: order: required" in info.value.message


@pytest.mark.parametrize("make, expected", [(lambda p: p / "none", "no such folder"), (lambda p: p, "holds no field")])
def test_a_missing_or_empty_folder_is_an_error(tmp_path, make, expected):
    (tmp_path / "README.md").write_text("not an entry")
    with pytest.raises(FieldFileError) as info:
        load_field_entries(make(tmp_path))
    assert expected in info.value.message and "reinstall" in info.value.hint


def test_chaos_diagnose_with_a_broken_file_exits_2_with_one_error(tmp_path, monkeypatch, capsys):
    folder = _folder(tmp_path, "field-grpc-message-limit")
    (folder / "field-grpc-message-limit.yaml").write_text(EXAMPLE.read_text().replace("family: transport", "family: x"))
    monkeypatch.setattr(field, "builtin_field_dir", lambda: folder)
    field._entries.cache_clear()
    try:
        code = main(["diagnose", str(LOGS / "host-oom-kills-worker-then-recovers")])
    finally:
        field._entries.cache_clear()
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err
    assert "field-grpc-message-limit.yaml:3:9: family: 'x' is not valid; valid: tf_config" in err and "\nhint: " in err


def test_the_readme_describes_every_kind():
    readme = (FIELD / "README.md").read_text(encoding="utf-8")
    assert {k for k in KINDS if f"| `{k}` |" in readme} == set(KINDS)
