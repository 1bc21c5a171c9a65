"""Input hashing: an image is rebuilt only when the hash of its inputs changes.

The hash is sha256 over a canonical JSON document of everything that shapes
the image: Dockerfile text, build args, the exact files copied (path + sha256),
the wheels (file name + size), the lock text, and the parent image's id or
inputs hash. It is stored on the image as the ``io.tfchaos.inputs`` label.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from collections.abc import Iterable
from typing import Any

SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".swp", "~")


def inputs_hash(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=list)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def collect_files(root: str, patterns: Iterable[str]) -> list[str]:
    """Relative paths under ``root`` matching ``patterns`` (``dir/**`` = the whole
    tree, skipping caches and bytecode), sorted. Missing paths are skipped: the
    caller copies whatever exists."""
    out: set[str] = set()
    for pat in patterns:
        if pat.endswith("/**"):
            base = os.path.join(root, pat[:-3])
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                for fn in filenames:
                    if fn.endswith(SKIP_SUFFIXES):
                        continue
                    out.add(os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/"))
        elif any(c in pat for c in "*?["):
            d = os.path.dirname(pat)
            full = os.path.join(root, d)
            if os.path.isdir(full):
                for fn in os.listdir(full):
                    if fnmatch.fnmatch(fn, os.path.basename(pat)) and os.path.isfile(os.path.join(full, fn)):
                        out.add(f"{d}/{fn}" if d else fn)
        elif os.path.isfile(os.path.join(root, pat)):
            out.add(pat)
    return sorted(out)


def files_digest(root: str, relpaths: Iterable[str]) -> list[tuple[str, str]]:
    return [(rel, file_sha256(os.path.join(root, rel))) for rel in relpaths]
