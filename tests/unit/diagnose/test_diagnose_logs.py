"""Reading what a user gives `chaos diagnose`: files, folders, and `kubectl logs`
dumps split at their pod boundaries; bad input is a DiagnoseError naming the path."""

from __future__ import annotations

import pytest

from chaos.diagnose.logs import DiagnoseError, read_logs, split_dump, worker_index


def names(logs):
    return [log.name for log in logs]


def test_one_file_is_one_worker_named_after_it(tmp_path):
    (tmp_path / "worker-1.log").write_text("a\nb\n")
    logs, notes = read_logs([tmp_path / "worker-1.log"])
    assert names(logs) == ["worker-1"] and logs[0].lines == ("a", "b") and notes == []
    assert logs[0].where(1) == f"{tmp_path / 'worker-1.log'}:2"


def test_a_folder_is_each_file_in_it_not_its_subfolders(tmp_path):
    (tmp_path / "worker-0.log").write_text("x\n")
    (tmp_path / "worker-1.txt").write_text("y\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "worker-2.log").write_text("z\n")
    logs, _ = read_logs([tmp_path])
    assert names(logs) == ["worker-0", "worker-1"]


def test_kubectl_prefix_dump_splits_by_pod_and_keeps_line_numbers():
    text = (
        "[pod/train-worker-0/tensorflow] starting\n"
        "[pod/train-worker-1/tensorflow] starting\n"
        "[pod/train-worker-1/tensorflow] UnavailableError: Socket closed\n"
        "  continued message without a prefix\n"
        "[pod/train-worker-0/tensorflow] done\n"
    )
    logs = split_dump(text, "job.log", "job")
    assert names(logs) == ["train-worker-0", "train-worker-1"]
    assert logs[1].lines == ("starting", "UnavailableError: Socket closed", "  continued message without a prefix")
    assert logs[1].line_numbers == (2, 3, 4)
    assert logs[0].lines == ("starting", "done")


@pytest.mark.parametrize("sep", ["_", "-"])  # docker-compose v1 and v2
def test_docker_compose_logs_split_by_service(sep):
    text = (
        f"Attaching to x_worker-0{sep}1, x_worker-1{sep}1\n"
        f"worker-0{sep}1  | Epoch 1/5\n"
        f"worker-1{sep}1  | UnavailableError: Socket closed\n"
        f"worker-0{sep}1  | done\n"
    )
    logs = split_dump(text, "compose.log", "compose")
    assert names(logs) == ["worker-0", "worker-1"] and logs[0].lines == ("Epoch 1/5", "done")
    assert logs[1].line_numbers == (3,)


@pytest.mark.parametrize(
    "header",
    [
        "==> {name} <==",
        "===== pod/{name} =====",
        "--- {name} ---",
        "$ kubectl logs {name}",
        "kubectl logs -n ml --tail=500 pod/{name}",
        "Pod: {name}",
    ],
)
def test_header_dumps_split_at_each_pod_header(header):
    text = "\n".join(
        [header.format(name="job-worker-0"), "line a", "", header.format(name="job-worker-1"), "line b", "line c"]
    )
    logs = split_dump(text, "dump.txt", "dump")
    assert names(logs) == ["job-worker-0", "job-worker-1"]
    assert logs[1].lines == ("line b", "line c") and logs[1].line_numbers == (5, 6)


def test_text_before_the_first_pod_header_is_kept_as_its_own_log():
    logs = split_dump("kubectl says hello\n==> w-0 <==\nx\n", "d.txt", "d")
    assert names(logs) == ["d (before the first pod)", "w-0"]


def test_a_pod_dumped_twice_is_one_worker():
    logs = split_dump("==> w-0 <==\na\n==> w-1 <==\nb\n==> w-0 <==\nc\n", "d", "d")
    assert names(logs) == ["w-0", "w-1"] and logs[0].lines == ("a", "c")


def test_two_files_of_the_same_name_stay_apart(tmp_path):
    for job in ("a", "b"):
        (tmp_path / job).mkdir()
        (tmp_path / job / "worker-0.log").write_text(f"{job}\n")
    logs, _ = read_logs([tmp_path / "a", tmp_path / "b"])
    assert len(logs) == 2 and all(str(tmp_path) in n for n in names(logs))


def test_missing_path_is_an_error_naming_it(tmp_path):
    with pytest.raises(DiagnoseError) as info:
        read_logs([tmp_path / "nope.log"])
    assert "nope.log: no such file or folder" in info.value.message and info.value.hint and info.value.exit_code == 2


def test_empty_folder_is_an_error(tmp_path):
    with pytest.raises(DiagnoseError, match="holds no files"):
        read_logs([tmp_path])


def test_binary_file_named_directly_is_an_error(tmp_path):
    path = tmp_path / "core.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    with pytest.raises(DiagnoseError) as info:
        read_logs([path])
    assert "core.gz: not a text log" in info.value.message and "unpack" in info.value.hint


def test_binary_file_in_a_folder_is_skipped_with_a_note(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "worker-0.log").write_text("hello\n")
    logs, notes = read_logs([tmp_path])
    assert names(logs) == ["worker-0"] and len(notes) == 1 and "a.bin" in notes[0]


def test_folder_of_binary_files_only_is_an_error(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"\x00\x01")
    with pytest.raises(DiagnoseError, match="none of its 1 files is a text log"):
        read_logs([tmp_path])


def test_empty_logs_are_an_error(tmp_path):
    (tmp_path / "worker-0.log").write_text("\n\n")
    with pytest.raises(DiagnoseError, match="the logs are empty"):
        read_logs([tmp_path])


def test_no_path_is_an_error():
    with pytest.raises(DiagnoseError, match="no log given"):
        read_logs([])


def test_utf8_cut_at_the_sniff_boundary_is_still_text(tmp_path):
    path = tmp_path / "w.log"
    path.write_bytes(("é" * 5000).encode())  # 10000 bytes: the sniff cuts a character in two
    logs, _ = read_logs([path])
    assert logs[0].lines[0].startswith("éé")


@pytest.mark.parametrize(
    "name, index",
    [
        ("worker-1", 1),
        ("job-worker-3-x7z2k", 3),
        ("train-chief-0", 0),
        ("tfjob-replica_2", 2),
        ("ps-0", None),
        ("node.log", None),
    ],
)
def test_worker_index_from_the_name(name, index):
    assert worker_index(name) == index
