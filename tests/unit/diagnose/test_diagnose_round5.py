"""Round 5 of the field reader (issue 24), written on the training cases only
(every split but heldout-5): TF up to 2.3 names its own server
``grpc://localhost:PORT`` whatever TF_CONFIG says, so that line alone is no
evidence of a localhost TF_CONFIG (it is when the same logs show TF printing
configured hosts); YARN's usage line ``... virtual memory used. Killing
container.`` is its memory kill. The lines are written as the tools print them."""

from __future__ import annotations

import pytest

from chaos.checks.verdict import Status
from chaos.diagnose import watch_for
from chaos.diagnose.history import LogHistory
from chaos.diagnose.match import confident, rank
from chaos.diagnose.observe import observe_files
from chaos.diagnose.servers import target_host
from chaos.diagnose.shapes import shapes_in
from chaos.diagnose.signatures import PatternSignature, proof_lines
from chaos.diagnose.watch import Watch

PASS, UNKNOWN = Status.PASS, Status.UNKNOWN

LOCALHOST_SIGNATURE = PatternSignature(r"Started server with target: grpc://(localhost|127\.0\.0\.1):")


def _observe(tmp_path, logs: dict[str, str], watch=None):
    watch = watch or Watch([LOCALHOST_SIGNATURE.pattern])
    paths = []
    for name, text in logs.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    workers, _ = observe_files(paths, watch)  # as chaos diagnose reads: the scenario patterns watched
    return workers


TF20_HANG = (
    "2020-01-15 19:13:45.016826: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:390] "
    "Started server with target: grpc://localhost:2000\n"
    "Number of devices: 2\n"
    "WARNING:tensorflow:ModelCheckpoint callback is not provided. Workers will need to restart training if any fails.\n"
)


@pytest.mark.parametrize(
    "line, host",
    [
        (
            "I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:390] Started server with target: grpc://localhost:2000",
            "localhost",
        ),
        ("Started server with target: grpc://proxy:23600", "proxy"),
        ("Started server with target: grpc://172.31.15.132:8081.", "172.31.15.132"),
        ("Started server with target: grpc://[::1]:2222", "[::1]"),
        ("Initialize GrpcChannelCache for job worker -> {0 -> localhost:2222}", None),
    ],
)
def test_the_server_target_line_names_the_host(line, host):
    assert target_host(line) == host


def test_a_localhost_server_target_alone_is_no_evidence_of_a_localhost_tf_config(tmp_path):
    workers = _observe(tmp_path, {"worker-0.log": TF20_HANG})
    assert (
        LOCALHOST_SIGNATURE.judge(LogHistory(workers)).status is UNKNOWN
    )  # cannot tell: TF <= 2.3 prints localhost anyway


def test_a_localhost_target_beside_a_configured_host_is_evidence(tmp_path):
    workers = _observe(
        tmp_path,
        {
            "worker-0.log": "I grpc_server_lib.cc:457] Started server with target: grpc://proxy:23600\n"
            "Waiting for 1/2 tasks to connect.\n",
            "worker-1.log": "I grpc_server_lib.cc:457] Started server with target: grpc://localhost:23601\n",
        },
    )
    judged = LOCALHOST_SIGNATURE.judge(LogHistory(workers))
    assert judged.status is PASS and "localhost:23601" in proof_lines(judged)[0].text


def test_a_tf20_hang_with_its_own_localhost_server_is_no_confident_tf_config_mistake(tmp_path, catalogue):
    """Before: the localhost-peers scenario's signature matched TF's own line, and the
    hang read as a TF_CONFIG mistake with confidence (the training case tf-35878)."""
    ranked = rank(catalogue, _observe(tmp_path, {"worker-0.log": TF20_HANG}, watch_for(catalogue)))
    assert not (confident(ranked) and ranked[0].entry.family == "tf_config")


@pytest.mark.parametrize(
    "line",
    [
        "15.8 GB of 14.7 GB virtual memory used. Killing container.",
        "Current usage: 1.1 GB of 2 GB physical memory used; 4.3 GB of 4.2 GB virtual memory used. Killing container.",
        "Current usage: 2.1 GB of 2 GB physical memory used; 3.0 GB of 4.2 GB virtual memory used. Killing container.",
    ],
)
def test_yarns_usage_line_is_its_memory_kill(line):
    assert "yarn_memory_kill" in shapes_in(line)


def test_kubernetes_killing_a_container_is_no_yarn_memory_kill():
    assert "yarn_memory_kill" not in shapes_in("Killing container with id docker://notebook:Need to kill Pod")


def test_a_yarn_usage_line_alone_reads_as_host_oom(tmp_path, catalogue):
    ranked = rank(
        catalogue,
        _observe(
            tmp_path,
            {"executor.log": "15.8 GB of 14.7 GB virtual memory used. Killing container.\n"},
            watch_for(catalogue),
        ),
    )
    assert confident(ranked) and ranked[0].entry.family == "host_oom"
