"""Local folders sent to the engine over its API, for a build container to read.

A build never bind-mounts a path of this machine: the engine may be elsewhere (a CI
job's ``docker:dind`` service, ``ssh://``, a shared build host) and see none of it.
Each folder goes, as a tar streamed through the API (``put_archive``), into a
labelled named volume of its own; the build container mounts those volumes
read-only through ``HostConfig.Mounts`` (type ``volume``), so its own layer gets
the same empty mount points a bind gave it, and nothing else: the committed
image is the same as with the binds (tests/integration/test_remote_engine.py
compares them), and no ``VOLUME`` reaches it (``volumes=`` would write
``Config.Volumes``, which ``docker commit`` keeps: issue 9).

The volumes are filled through a container that is created and never started
(the engine mounts a created container's volumes for an archive call); it and
the volumes are removed in ``finally``, also when the build fails.
"""

from __future__ import annotations

import contextlib
import os
import tarfile
import uuid
from collections.abc import Iterator

from chaos.errors import InfrastructureError

CHUNK = 1 << 20
FILL_ROOT = "/tfchaos-send"


def _entries(folder: str) -> Iterator[tuple[str, str]]:
    """(path on disk, name in the tar) of ``folder``'s tree, sorted; symlinks followed
    (a bind showed them as links to paths the engine cannot see)."""
    for here, dirs, files in os.walk(folder, followlinks=True):
        dirs.sort()
        rel = os.path.relpath(here, folder)
        if rel != ".":
            yield here, rel
        for name in sorted(files):
            yield os.path.join(here, name), os.path.normpath(os.path.join(rel, name))


def tar_chunks(folder: str, *, chunk: int = CHUNK) -> Iterator[bytes]:
    """``folder``'s tree as an uncompressed tar, streamed in chunks (a wheelhouse is
    hundreds of MB: never held whole in memory). Owned by root, modes and mtimes as on disk."""
    for path, name in _entries(folder):
        st = os.stat(path)
        info = tarfile.TarInfo(name)
        info.mode, info.mtime, info.uid, info.gid = st.st_mode & 0o7777, int(st.st_mtime), 0, 0
        if os.path.isdir(path):
            info.type = tarfile.DIRTYPE
            yield info.tobuf(format=tarfile.PAX_FORMAT)
            continue
        info.size = st.st_size
        yield info.tobuf(format=tarfile.PAX_FORMAT)
        sent = 0
        with open(path, "rb") as fh:
            while block := fh.read(chunk):
                sent += len(block)
                yield block
        if sent != info.size:
            raise InfrastructureError(
                f"{path} changed size while it was sent to the engine ({info.size} -> {sent})",
                hint="nothing else should write the build's inputs during a build; build again",
            )
        if info.size % tarfile.BLOCKSIZE:
            yield tarfile.NUL * (tarfile.BLOCKSIZE - info.size % tarfile.BLOCKSIZE)
    yield tarfile.NUL * (2 * tarfile.BLOCKSIZE)


def folder_bytes(folder: str) -> int:
    return sum(os.path.getsize(p) for p, _ in _entries(folder) if not os.path.isdir(p))


@contextlib.contextmanager
def read_only_volumes(
    client, image: str, folders: dict[str, str], *, labels: dict[str, str], prefix: str
) -> Iterator[list]:
    """For each ``target -> local folder``: a named volume holding a copy of the folder,
    yielded as read-only Mounts at the targets; the volumes and the filling container
    are removed whatever happens. ``image`` is any image on the engine (the build's own)."""
    import docker.errors  # noqa: PLC0415
    from docker.types import Mount  # noqa: PLC0415

    tag = uuid.uuid4().hex[:8]
    volumes = []
    filler = None
    try:
        try:
            for i, _ in enumerate(folders):
                volumes.append(client.volumes.create(f"{prefix}-{tag}-in{i}", labels=labels))
            filler = client.containers.create(
                image,
                entrypoint=["true"],
                command=[],
                name=f"{prefix}-{tag}-send",
                labels=labels,
                network_disabled=True,
                mounts=[Mount(f"{FILL_ROOT}/{i}", v.name, type="volume") for i, v in enumerate(volumes)],
            )
            for i, folder in enumerate(folders.values()):
                if not filler.put_archive(f"{FILL_ROOT}/{i}", tar_chunks(folder)):
                    raise InfrastructureError(
                        f"the engine did not take the copy of {folder}", hint="see the engine's log; build again"
                    )
        except docker.errors.APIError as exc:
            raise InfrastructureError(
                f"could not send the build's inputs ({', '.join(folders.values())}) to the engine: "
                f"{exc.explanation or exc}",
                hint="check the engine's free space (`docker system df`); build again",
            ) from None
        filler.remove(force=True)
        filler = None
        yield [Mount(target, v.name, type="volume", read_only=True) for target, v in zip(folders, volumes)]
    finally:
        if filler is not None:
            with contextlib.suppress(Exception):
                filler.remove(force=True)
        for volume in volumes:
            with contextlib.suppress(Exception):
                volume.remove(force=True)
