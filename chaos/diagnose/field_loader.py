"""Load the entries known from the field: ``field/<name>.yaml`` -> ``KnownFailure``.

One file per entry (``field/README.md`` describes the format and what the
weights mean), read as scenario files are read (``chaos.scenario.loader``:
within limits, YAML 1.2, line and column of every problem) and typed strictly
at this boundary. A file that is wrong raises ``FieldFileError`` naming the
file, the line, the key, the valid values or keys and a close match; never a
traceback. The entries come out in the order of their ``order:`` (a ranking's
ties keep catalogue order), which no two files share.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, PlainValidator, Tag, ValidationError

from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.families import FAMILIES
from chaos.diagnose.logs import DiagnoseError
from chaos.diagnose.shapes import SHAPE_NAMES
from chaos.diagnose.signatures import FieldExitSignature, ShapeSignature
from chaos.diagnose.tfconfig import SingleHostClusterSignature, TfConfigMistakeSignature
from chaos.diagnose.trends import BringUpShapeSignature, LossExplodesSignature
from chaos.errors import ChaosError
from chaos.registry import did_you_mean
from chaos.scenario import loader
from chaos.scenario.model import Text
from chaos.scenario.problems import Problem, problems_of, render
from chaos.text import clean, kind_of, shown

HINT = "field/README.md describes an entry's keys, and each signature kind's"
MISSING_HINT = "reinstall tfchaos (`pip install --force-reinstall tfchaos`), or run from a complete source checkout"
MAX_WEIGHT = 10


class FieldFileError(DiagnoseError):
    """A field entry's file (or their folder) that cannot be used; ``path`` names it."""

    def __init__(self, path: Path, message: str, *, hint: str | None = HINT) -> None:
        super().__init__(message, hint=hint)
        self.path = path


def _weight(value: Any) -> Any:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and math.isfinite(value) and 0 < value <= MAX_WEIGHT:
        return value  # as written: 4 stays 4, 1.5 stays 1.5
    raise ValueError(f"must be a number > 0 and <= {MAX_WEIGHT} (got {shown(value)})")


def _exit_code(value: Any) -> Any:
    if value == "nonzero" or (isinstance(value, int) and not isinstance(value, bool) and value != 0):
        return value
    raise ValueError(f"must be an exit code (a whole number, not 0) or 'nonzero' (got {shown(value)})")


def _known_shape(value: str) -> str:
    if value not in SHAPE_NAMES:
        raise ValueError(
            f"not a line shape of chaos/diagnose/shapes.py (got {shown(value)}){did_you_mean(value, sorted(SHAPE_NAMES))}"
        )
    return value


def _thread(value: str) -> str:
    if not re.fullmatch(r"https://\S+", value):
        raise ValueError(f"must be the address of a public thread, https://... (got {shown(value)})")
    return value


Weight = Annotated[float, PlainValidator(_weight)]
ExitCode = Annotated[int | str, PlainValidator(_exit_code)]
ShapeName = Annotated[str, AfterValidator(_known_shape)]
Source = Annotated[str, AfterValidator(_thread)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _Shape(_Strict):
    """A line of one of the reader's shapes (``signatures.ShapeSignature``)."""

    kind: Literal["shape"]
    shapes: list[ShapeName] = Field(min_length=1)
    weight: Weight
    why: Text

    def signature(self) -> ShapeSignature:
        return ShapeSignature(tuple(self.shapes), self.weight, self.why)


class _BringUpShape(_Shape):
    """A line of these shapes printed before the worker trained (``trends.BringUpShapeSignature``)."""

    kind: Literal["bring_up_shape"]  # type: ignore[assignment]

    def signature(self) -> BringUpShapeSignature:  # type: ignore[override]
        return BringUpShapeSignature(tuple(self.shapes), self.weight, self.why)


class _Exit(_Strict):
    """An exit the failure explains, worth no score (``signatures.FieldExitSignature``)."""

    kind: Literal["exit"]
    code: ExitCode
    oom_killed: bool | None = None

    def signature(self) -> FieldExitSignature:
        return FieldExitSignature(self.code, self.oom_killed)


class _TfConfigMistake(_Strict):
    """A printed TF_CONFIG wrong by itself (``tfconfig.TfConfigMistakeSignature``)."""

    kind: Literal["tf_config_mistake"]
    weight: Weight

    def signature(self) -> TfConfigMistakeSignature:
        return TfConfigMistakeSignature(self.weight)


class _SingleHostCluster(_Strict):
    """A printed cluster all on one host while the peers cannot connect (``tfconfig.SingleHostClusterSignature``)."""

    kind: Literal["single_host_cluster"]
    weight: Weight

    def signature(self) -> SingleHostClusterSignature:
        return SingleHostClusterSignature(self.weight)


class _LossExplodes(_Strict):
    """A loss that grows a hundredfold (``trends.LossExplodesSignature``)."""

    kind: Literal["loss_explodes"]
    weight: Weight

    def signature(self) -> LossExplodesSignature:
        return LossExplodesSignature(self.weight)


KINDS: dict[str, type[_Strict]] = {
    "shape": _Shape,
    "bring_up_shape": _BringUpShape,
    "exit": _Exit,
    "tf_config_mistake": _TfConfigMistake,
    "single_host_cluster": _SingleHostCluster,
    "loss_explodes": _LossExplodes,
}


def _kind(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else None
    return kind if kind is None or isinstance(kind, str) else shown(kind)


SignatureField = Annotated[
    Union[tuple(Annotated[model, Tag(kind)] for kind, model in KINDS.items())],  # noqa: UP007 - built from KINDS
    Discriminator(_kind),
]


class FieldEntry(_Strict):
    """One failure known from the field, as its file writes it."""

    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=200, description="kebab-case; the file's name")
    order: int = Field(ge=1, description="its place in the catalogue (a ranking's ties keep it); unique")
    family: Literal[tuple(FAMILIES)]  # type: ignore[valid-type]
    description: Text
    symptom: Text
    cause: Text
    fix: Text
    signatures: list[SignatureField] = Field(min_length=1)
    sources: list[Source] = Field(min_length=1, description="the public threads it was read from")
    reproduced_by: Text | None = Field(None, description="the command that reproduces it outside the catalogue")

    def known_failure(self) -> KnownFailure:
        return KnownFailure(
            name=self.name,
            file="",
            description=self.description,
            symptom=self.symptom,
            cause=self.cause,
            fix=self.fix,
            signatures=tuple(s.signature() for s in self.signatures),
            measured=(),
            family=self.family,
            origin="field",
            sources=tuple(self.sources),
            reproduced_by=self.reproduced_by or "",
        )


def load_field_file(path: str | Path) -> FieldEntry:
    """One entry's file, strictly typed; FieldFileError naming ``file:line:column: key: what``."""
    path = Path(path)
    try:
        source, data, root = loader.read_yaml(path, hint=HINT)
    except ChaosError as exc:  # unreadable, too large, not UTF-8, not YAML
        raise FieldFileError(path, exc.message, hint=HINT if exc.hint == loader.PATH_HINT else exc.hint) from None
    if not isinstance(data, dict):
        what = "the file is empty" if data is None else f"got {kind_of(data)}"
        raise FieldFileError(path, f"{source}:1:1: a field entry is a mapping (name: ..., order: ..., ...); {what}")
    try:
        entry = FieldEntry.model_validate(data, strict=True)
    except ValidationError as exc:
        problems, more = problems_of(exc, FieldEntry)
        raise FieldFileError(path, render(problems, source, more, loader.positions_in(root))) from None
    if entry.name != path.stem:
        problem = Problem(("name",), f"{shown(entry.name)} differs from the file name {shown(path.stem)}")
        raise FieldFileError(
            path,
            render([problem], source, positions=loader.positions_in(root)),
            hint=f"name the file {entry.name}.yaml, or set name: {clean(path.stem)}",
        )
    return entry


def load_field_entries(folder: str | Path) -> list[KnownFailure]:
    """Every entry in ``folder`` (its *.yaml files), in ``order:``; one FieldFileError
    listing every bad file, or saying the folder holds none."""
    folder = Path(folder)
    shown_folder = loader.shown_path(folder)
    if not folder.is_dir():
        raise FieldFileError(
            folder, f"{shown_folder}: no such folder (the entries known from the field)", hint=MISSING_HINT
        )
    files = sorted(p for p in folder.iterdir() if p.suffix in loader.SCENARIO_SUFFIXES and not p.name.startswith("."))
    if not files:
        raise FieldFileError(folder, f"{shown_folder}: holds no field entry (*.yaml)", hint=MISSING_HINT)
    errors: list[FieldFileError] = []
    by_order: dict[int, Path] = {}
    entries: list[FieldEntry] = []
    for path in files:
        try:
            entry = load_field_file(path)
        except FieldFileError as exc:
            errors.append(exc)
            continue
        if entry.order in by_order:
            errors.append(
                FieldFileError(
                    path,
                    f"{loader.shown_path(path)}: order: {entry.order} is also the order of "
                    f"{loader.shown_path(by_order[entry.order])}",
                    hint="give each entry its own order (a gap between two leaves room for a new one)",
                )
            )
            continue
        by_order[entry.order] = path
        entries.append(entry)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FieldFileError(folder, "\n".join(e.message for e in errors), hint=HINT)
    return [e.known_failure() for e in sorted(entries, key=lambda e: e.order)]
