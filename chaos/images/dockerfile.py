"""Read an app Dockerfile (docker/worker/Dockerfile, docker/proxy/Dockerfile)
into what the commit builder does with it.

The commit builder applies a Dockerfile in one container: COPY becomes
``put_archive``, the RUN lines run in that container (one shell, in order, after
every COPY), and the configuration instructions become ``docker commit
--change`` lines. ``docker build`` of the same file gives an equivalent image
(``TFCHAOS_BUILD_METHOD=dockerfile``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from chaos.errors import InfrastructureError

# Instructions ``docker commit --change`` accepts.
COMMIT_CHANGES = {"CMD", "ENTRYPOINT", "ENV", "EXPOSE", "LABEL", "USER", "VOLUME", "WORKDIR"}
IGNORED = {"ARG", "FROM"}  # FROM is the deps image the builder names


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined,
    comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # comment lines inside a continued instruction are dropped too, as docker does
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = pending + line
        pending = ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def env_pairs(rest: str) -> dict[str, str]:
    """``ENV A=1 B="x y"`` or ``ENV A 1`` -> {"A": "1", ...}."""
    words = shlex.split(rest)
    if words and "=" not in words[0]:
        return {words[0]: rest.split(None, 1)[1].strip() if len(words) > 1 else ""}
    return dict(w.split("=", 1) for w in words)


@dataclass
class RunStep:
    """The RUN lines, as one shell script, and the ENV/WORKDIR/USER they see."""

    script: str
    env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    user: str | None = None


@dataclass
class CommitRecipe:
    copies: list[tuple[str, str]] = field(default_factory=list)  # (source in the package root, destination)
    run: RunStep | None = None
    changes: list[str] = field(default_factory=list)
    sets_entrypoint: bool = False
    sets_cmd: bool = False


def _unsupported(path: str, why: str) -> InfrastructureError:
    return InfrastructureError(f"{path}: {why}", hint="set TFCHAOS_BUILD_METHOD=dockerfile to use docker build")


def commit_recipe(text: str, path: str = "Dockerfile") -> CommitRecipe:
    """What the commit builder does for this Dockerfile, or an error naming what it cannot do."""
    recipe = CommitRecipe()
    env: dict[str, str] = {}
    workdir: str | None = None
    user: str | None = None
    runs: list[str] = []
    for word, rest in instructions(text):
        if word in IGNORED:
            continue
        if word == "COPY":
            parts = rest.split()
            if len(parts) != 2 or parts[0].startswith("--"):
                raise _unsupported(path, f"the commit builder copies one source to one destination, not `COPY {rest}`")
            if runs:
                raise _unsupported(path, "the commit builder runs every RUN after every COPY; move this COPY up")
            recipe.copies.append((parts[0], parts[1]))
            continue
        if word == "RUN":
            if rest.startswith("["):
                raise _unsupported(path, "the commit builder takes RUN in shell form only")
            step = RunStep("", dict(env), workdir, user)
            if recipe.run is not None and (step.env, step.workdir, step.user) != (
                recipe.run.env,
                recipe.run.workdir,
                recipe.run.user,
            ):
                raise _unsupported(
                    path, "the commit builder runs all RUN lines in one shell: put no ENV, WORKDIR or USER between them"
                )
            recipe.run = step
            runs.append(rest)
            continue
        if word not in COMMIT_CHANGES:
            raise _unsupported(path, f"instruction {word} is not supported by the commit builder")
        recipe.changes.append(f"{word} {rest}")
        if word == "ENV":
            env.update(env_pairs(rest))
        elif word == "WORKDIR":
            workdir = rest
        elif word == "USER":
            user = rest
        recipe.sets_entrypoint |= word == "ENTRYPOINT"
        recipe.sets_cmd |= word == "CMD"
    if recipe.run is not None:
        recipe.run.script = "set -e\n" + "\n".join(runs) + "\n"
    return recipe


__all__ = ["CommitRecipe", "RunStep", "commit_recipe", "env_pairs", "instructions"]
