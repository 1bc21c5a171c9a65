"""Failures known from the field that this machine cannot reproduce: GPU
memory, NCCL, a cloud's preemption and a kubelet's eviction, parameter-server
jobs at scale... Each entry is marked "from the field, not reproduced here",
with the public threads it was read from, its signatures (the line shapes of
``chaos.diagnose.shapes``), and its explanation and fix, next to the entries
measured by the scenario files.

The entries are data: one file each in ``field/`` (``field/<name>.yaml``,
shipped in the wheel as ``chaos/_assets/field``), loaded by
``chaos.diagnose.field_loader``. ``field/README.md`` describes the format and
what each signature's weight means.
"""

from __future__ import annotations

import functools

from chaos.diagnose.catalogue import KnownFailure
from chaos.diagnose.field_loader import load_field_entries
from chaos.resources import builtin_field_dir


@functools.lru_cache(maxsize=1)
def _entries() -> tuple[KnownFailure, ...]:
    return tuple(load_field_entries(builtin_field_dir()))


def field_entries() -> list[KnownFailure]:
    """The field's entries, after the scenario files' in the catalogue."""
    return list(_entries())
