"""An environment fingerprint: what a worker runs on, flattened to name -> value.

Version skew between workers is silent in TF (2.20 beside 2.18 trains on), so
the runner compares these fingerprints across workers to name the difference.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from importlib import metadata
from typing import Any

# Environment variables that change how TF loads or behaves.
ENV_PREFIXES = ("TF_", "CUDA_", "NCCL_", "XLA_", "OMP_", "KMP_")
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONHASHSEED", "PATH")


def environment_fingerprint(environ: dict[str, str] | None = None) -> dict[str, str]:
    environ = dict(os.environ if environ is None else environ)
    fp: dict[str, str] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libc": "-".join(platform.libc_ver()),
    }
    for dist in metadata.distributions():
        # Normalized as PEP 503 does: tensorflow_cpu and tensorflow-cpu are one package.
        name = re.sub(r"[-_.]+", "-", (dist.metadata.get("Name") or "")).lower()
        if name:
            fp[f"pkg:{name}"] = dist.version
    for key, value in environ.items():
        if key.startswith(ENV_PREFIXES) or key in ENV_NAMES:
            if key == "TF_CONFIG":  # differs per worker by design
                continue
            fp[f"env:{key}"] = value
    return dict(sorted(fp.items()))


def python_version() -> str:
    return sys.version.split()[0]


def start_fields(tf_version: str, keras_version: str) -> dict[str, Any]:
    """A ``start`` event's fields, the same from the harness, the parameter-server
    harness and the agent in a user's job: the versions and the fingerprint."""
    return {
        "tf_version": tf_version,
        "keras_version": keras_version,
        "python_version": python_version(),
        "fingerprint": environment_fingerprint(),
    }
