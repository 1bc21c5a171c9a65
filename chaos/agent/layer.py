"""What the runner layers onto a user's image to put the agent in it, and the
environment that turns it on. One source of truth for the runner and tests.

The layer is a directory, ``/opt/tfchaos-agent``: ``sitecustomize.py`` at its
root (chaos/agent/sitecustomize.py) and the part of the ``chaos`` package the
agent imports, none of which imports TensorFlow or anything outside the
standard library at import time (NumPy only when a digest is computed).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

AGENT_DIR = "/opt/tfchaos-agent"

# Beside chaos/agent/**: the modules the agent imports.
SHARED_MODULES = (
    "chaos/__init__.py",
    "chaos/events.py",
    "chaos/worker/__init__.py",
    "chaos/worker/emit.py",
    "chaos/worker/fingerprint.py",
    "chaos/worker/digest.py",  # the weights digest, shared with the harness
    "chaos/worker/callback.py",  # ChaosEvents (TF imported inside functions)
    "chaos/worker/backup_formats.py",  # where each Keras's BackupAndRestore writes (the same)
)


def package_root() -> Path:
    """The folder holding the ``chaos`` package the layer is copied from."""
    from chaos.resources import package_root as root  # here: this module is in the layer, resources is not

    return root()


def files(root: Path | None = None) -> dict[str, Path]:
    """Layer path (relative to AGENT_DIR) -> source file."""
    root = root or package_root()
    out = {"sitecustomize.py": root / "chaos/agent/sitecustomize.py"}
    for name in SHARED_MODULES:
        out[name] = root / name
    for path in sorted((root / "chaos/agent").rglob("*.py")):
        out[path.relative_to(root).as_posix()] = path
    return out


def write_tree(dest: Path, root: Path | None = None) -> Path:
    """The layer as a directory (to COPY in a Dockerfile or bind-mount)."""
    for rel, src in files(root).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(src.read_bytes())
        target.chmod(0o644)
    return dest


def tar_bytes(root: Path | None = None, prefix: str = AGENT_DIR.lstrip("/")) -> bytes:
    """The layer as a tar archive rooted at ``/`` (for Docker's put_archive or a build context)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for rel, src in files(root).items():
            parts = f"{prefix}/{rel}".split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
            data = src.read_bytes()
            info = tarfile.TarInfo(f"{prefix}/{rel}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def environment(worker_index: int, checkpoint_dir: str, image_env: dict[str, str] | None = None) -> dict[str, str]:
    """The variables that turn the agent on in worker ``worker_index``.

    PYTHONPATH keeps the image's own entries after the agent's (a container's
    environment replaces the image's variable of the same name).
    """
    existing = (image_env or {}).get("PYTHONPATH", "")
    return {
        "PYTHONPATH": AGENT_DIR + (":" + existing if existing else ""),
        "CHAOS_AGENT": "1",
        "CHAOS_WORKER_INDEX": str(worker_index),
        "CHAOS_CHECKPOINT_DIR": checkpoint_dir,
    }
