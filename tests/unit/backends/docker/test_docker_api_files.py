"""Counting the files of a checkpoint folder from a container's archive stream."""

from __future__ import annotations

import io
import tarfile

from docker.errors import NotFound

from chaos.backends.docker.api import count_files


def archive(files: dict[str, bytes], dirs=("ckpt",)) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Container:
    def __init__(self, data: bytes | None, chunk=7):
        self.data, self.chunk = data, chunk

    def get_archive(self, path):
        if self.data is None:
            raise NotFound("no such path")
        return (self.data[i : i + self.chunk] for i in range(0, len(self.data), self.chunk)), {}


def test_an_empty_folder_has_no_files():
    assert count_files(Container(archive({})), "/ckpt") == 0


def test_files_are_counted_up_to_enough_from_a_chunked_stream():
    files = {f"ckpt/chief/ckpt-{i}.index": b"x" * 1000 for i in range(5)}
    assert count_files(Container(archive(files)), "/ckpt") == 1
    assert count_files(Container(archive(files)), "/ckpt", enough=10) == 5


def test_a_path_docker_cannot_read_is_unknown():
    assert count_files(Container(None), "/ckpt") is None
    assert count_files(Container(b"not a tar archive at all" * 40), "/ckpt") is None
