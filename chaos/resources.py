"""Where the framework's own files are, in a source checkout and in an installed wheel.

The repository keeps ``docker/`` (Dockerfiles, TF locks), ``scenarios/`` and
``field/`` (the failures ``chaos diagnose`` knows from the field) at its root.
The wheel ships them inside the package as ``chaos/_assets/docker``,
``chaos/_assets/scenarios`` and ``chaos/_assets/field`` (setup.py maps them),
so an installed tfchaos needs no checkout. A checkout (also an editable
install) has no ``_assets`` and uses the root folders.

The worker and proxy images copy their code from ``package_root()``: the
folder holding the ``chaos`` package (the checkout, or site-packages). The same
files have the same hashes there, so a wheel and a checkout agree on which
images are up to date.
"""

from __future__ import annotations

from pathlib import Path

from chaos.errors import InfrastructureError

PACKAGE_DIR = Path(__file__).resolve().parent
ASSETS_DIR = PACKAGE_DIR / "_assets"
# A file every complete docker/ folder has.
DOCKER_MARKER = "worker/Dockerfile"


def package_root() -> Path:
    """The folder holding the ``chaos`` package: image code is collected from here."""
    return PACKAGE_DIR.parent


def source_checkout() -> Path | None:
    """The repository root when ``chaos`` is imported from a source checkout, else None."""
    root = package_root()
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "tfchaos"' in text else None


def _asset(name: str) -> tuple[Path, list[Path]]:
    """(where ``name`` is, every place looked at): the wheel's copy first, then the checkout's."""
    candidates = [ASSETS_DIR / name]
    checkout = source_checkout()
    if checkout is not None:
        candidates.append(checkout / name)
    for path in candidates:
        if path.is_dir():
            return path, candidates
    return candidates[0], candidates


def docker_dir() -> Path:
    """The Dockerfiles and TF locks (``docker/``)."""
    path, looked = _asset("docker")
    if not (path / DOCKER_MARKER).is_file():
        raise InfrastructureError(
            f"tfchaos's Dockerfiles are missing (looked for {DOCKER_MARKER} in {', '.join(str(p) for p in looked)})",
            hint="reinstall tfchaos (`pip install --force-reinstall tfchaos`), or run from a complete source checkout",
        )
    return path


def builtin_scenarios_dir() -> Path:
    """The scenarios that ship with tfchaos (``scenarios/``).

    Never raises: callers report a missing folder as they report any missing folder.
    """
    return _asset("scenarios")[0]


def builtin_field_dir() -> Path:
    """The entries known from the field (``field/``: one YAML file per failure, ``chaos.diagnose.field``).

    Never raises: the loader reports a missing folder.
    """
    return _asset("field")[0]


def compose_root() -> Path:
    """Where ``chaos compose --write`` writes: the checkout (docker-compose.yml is
    committed there), else the current folder (the user's own repository)."""
    return source_checkout() or Path.cwd()


__all__ = [
    "builtin_field_dir",
    "builtin_scenarios_dir",
    "compose_root",
    "docker_dir",
    "package_root",
    "source_checkout",
]
