"""Round 4 of the field reader (issue 24): Cloud ML Engine's message for a
replica killed for its memory, Horovod's NoValidAddressesFound, an undefined
CUDA runtime symbol (a library built against another CUDA), and a task's port
held by another process read as either a blocked port or a TF_CONFIG that
gives two tasks one port (tied, so no confident answer, unless a printed
cluster shows the duplicate). The lines are written as the tools print them;
no held-out case is read."""

from __future__ import annotations

import json

import pytest

from chaos.diagnose.match import confident, rank
from chaos.diagnose.observe import observe_files
from chaos.diagnose.shapes import shapes_in


@pytest.mark.parametrize(
    "line, shape",
    [
        (
            "The replica worker 3 ran out-of-memory and exited with a non-zero status of 9(SIGKILL). To find out more about "
            "why your job exited please check the logs",
            "cloud_replica_oom",
        ),
        (
            "horovod.runner.common.util.network.NoValidAddressesFound: Horovod was unable to connect to task service #2 on any "
            "of the following addresses: {'eth0': [('10.1.2.3', 41217)]}.",
            "horovod_no_valid_addresses",
        ),
        (
            "Horovodrun was unable to connect to the driver service on any of the following addresses: "
            "{'lo': [('127.0.0.1', 23456)]}.",
            "horovod_no_valid_addresses",
        ),
        (
            "OSError: /opt/venv/lib/python3.8/site-packages/horovod/tensorflow/mpi_lib.cpython-38-x86_64-linux-gnu.so: "
            "undefined symbol: cudaLaunch",
            "undefined_symbol",
        ),
        (
            "ImportError: /usr/lib/python3/dist-packages/horovod/common/mpi_lib.so: undefined symbol: __cudaRegisterFatBinaryEnd",
            "undefined_symbol",
        ),
    ],
)
def test_the_round_4_shapes_read_the_lines_as_the_tools_print_them(line, shape):
    assert shape in shapes_in(line)


def test_an_undefined_c_library_symbol_is_no_version_skew():
    assert "undefined_symbol" not in shapes_in("python: symbol lookup error: libfoo.so: undefined symbol: foo_init")


def _diagnose(tmp_path, text, catalogue, name="worker-0.log"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    workers, _ = observe_files([path])
    return rank(catalogue, workers)


def _families(ranked):
    out = []
    for match in ranked:
        if match.entry.family not in out:
            out.append(match.entry.family)
    return out


def test_a_cloud_replica_killed_for_its_memory_is_host_oom(tmp_path, catalogue):
    ranked = _diagnose(
        tmp_path, "The replica master 0 ran out-of-memory and exited with a non-zero status of 9(SIGKILL)\n", catalogue
    )
    assert ranked and confident(ranked) and ranked[0].entry.family == "host_oom"


def test_horovod_tasks_that_cannot_reach_a_service_are_a_blocked_port(tmp_path, catalogue):
    text = (
        "Traceback (most recent call last):\n"
        "horovod.runner.common.util.network.NoValidAddressesFound: Horovod was unable to connect to task service #1 "
        "on any of the following addresses: {'ens3': [('10.0.0.7', 35711)]}.\n"
    )
    ranked = _diagnose(tmp_path, text, catalogue)
    assert ranked and confident(ranked) and ranked[0].entry.family == "port_blocked"


def test_an_undefined_cuda_runtime_symbol_is_version_skew(tmp_path, catalogue):
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    import horovod.tensorflow as hvd\n"
        "tensorflow.python.framework.errors_impl.NotFoundError: /opt/venv/lib/python3.8/site-packages/horovod/"
        "tensorflow/mpi_lib.cpython-38-x86_64-linux-gnu.so: undefined symbol: cudaLaunch\n"
    )
    ranked = _diagnose(tmp_path, text, catalogue)
    assert ranked and confident(ranked) and ranked[0].entry.family == "version_skew"


PORT_IN_USE = (
    "E0727 11:38:35.762428930   22857 tcp_server_posix.c:284]     bind addr=[::]:2223: Address already in use\n"
    "UnknownError: Could not start gRPC server\n"
)


def test_a_port_in_use_alone_is_no_confident_answer_but_names_both_readings(tmp_path, catalogue):
    ranked = _diagnose(tmp_path, PORT_IN_USE, catalogue)
    assert ranked and not confident(ranked)
    assert {"port_blocked", "tf_config"} <= set(_families(ranked)[:3])


def test_a_port_in_use_with_a_cluster_giving_two_tasks_that_port_is_the_tf_config(tmp_path, catalogue):
    config = {"cluster": {"worker": ["10.0.0.5:2223", "10.0.0.5:2223"]}, "task": {"type": "worker", "index": 1}}
    text = f"TF_CONFIG: {json.dumps(config)}\n" + PORT_IN_USE
    ranked = _diagnose(tmp_path, text, catalogue)
    assert ranked and confident(ranked) and ranked[0].entry.family == "tf_config"
