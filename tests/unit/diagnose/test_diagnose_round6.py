"""Round 6 of the field reader (issue 24), written on the training cases only
(every split but heldout-6; heldout-6 seen as its table only): NCCL up to 2.3
prints its WARN and error-chain lines without the word "NCCL"; a CPU without
an instruction the TensorFlow build uses stops it with SIGILL (exit 132); an
error naming a temporary checkpoint shard (``model.ckpt-0_temp_<hex>/part-...
.data-00000-of-00001``) is a checkpoint that went missing while it was saved.
The lines are written as the tools print them."""

from __future__ import annotations

import pytest

from chaos.diagnose.match import confident
from chaos.diagnose.shapes import shapes_in

# --- NCCL <= 2.3: no "NCCL" word before WARN / INFO


@pytest.mark.parametrize(
    "line",
    [
        "node-a:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer",
        "gpu-ser015:2123:2230 [3] include/socket.h:194 WARN Call to recv failed : Connection reset by peer",
        "node-b:4105:4372 [0] misc/ibvwrap.cu:63 WARN Failed to open libibverbs.so[.1]",
    ],
)
def test_an_old_nccl_warn_line_without_the_nccl_word_is_nccls_warning(line):
    assert "nccl_warn" in shapes_in(line)


@pytest.mark.parametrize(
    "line",
    [
        "node-a:17281:17552 [1] INFO bootstrap.cu:45 -> 2 [Net]",
        "node-a:17281:17552 [1] INFO transport/net_socket.cu:166 -> 2",
    ],
)
def test_an_old_nccl_info_line_returning_an_error_code_is_nccls_error_chain(line):
    assert "nccl_error_chain" in shapes_in(line)


@pytest.mark.parametrize(
    "line",
    [
        "18/01/10 16:00:56 WARN TaskSetManager: Lost task 1.0 in stage 1.0",  # Spark's log4j
        "node-a:17283:17549 [3] INFO NET : Using interface eth0:10.0.0.2<0>",  # NCCL's ordinary INFO
        "node-a:17281:17552 [1] INFO init.cu:413 -> 0",  # a zero code is success
        "2019-05-01 10:00:00 WARN  Some other tool: include/socket.h:371",
    ],
)
def test_other_warn_and_info_lines_are_not_nccl_failures(line):
    assert not {"nccl_warn", "nccl_error_chain"} & set(shapes_in(line))


OLD_NCCL_BOOTSTRAP = (
    "node-a:17283:17549 [3] include/socket.h:371 WARN Connection closed by remote peer\n"
    "node-a:17283:17549 [3] INFO transport/net_socket.cu:166 -> 2\n"
    "node-a:17281:17552 [1] INFO bootstrap.cu:45 -> 2 [Net]\n"
    "node-a:17281:17552 [1] INFO bootstrap.cu:259 -> 2\n"
    "node-a:17281:17552 [1] INFO init.cu:413 -> 2\n"
)


def test_old_nccl_bootstrap_lines_alone_read_as_a_transport_failure(rank_log):
    """Before: no line had a shape and the logs read "no match" (the training case horovod-666)."""
    ranked = rank_log(name="rank-1.log", text=OLD_NCCL_BOOTSTRAP)
    assert confident(ranked) and ranked[0].entry.family == "transport"


# --- SIGILL: a CPU without an instruction the build uses


@pytest.mark.parametrize(
    "line",
    [
        "INFO: container failed with non-zero exit code: 132 (exit code 132)",
        "command terminated with exit code 132",
        "Illegal instruction (core dumped)",
        "mpirun noticed that process rank 0 with PID 0 on node n1 exited on signal 4 (Illegal instruction).",
        "Fatal Python error: SIGILL",
    ],
)
def test_an_illegal_instruction_is_read(line):
    assert "illegal_instruction" in shapes_in(line)


@pytest.mark.parametrize(
    "line",
    [
        "command terminated with exit code 137",
        "exit code 1321",
        "2018-03-15 19:59:32.132 step 132 loss 0.5",
        "Process exited with status 13",
    ],
)
def test_other_exits_and_numbers_are_no_illegal_instruction(line):
    assert "illegal_instruction" not in shapes_in(line)


def test_exit_132_alone_reads_as_an_environment_mismatch(rank_log):
    """Before: "no match" (the training case determined-3610: a CPU without AVX)."""
    ranked = rank_log(
        name="trial.log",
        text="[2022-02-11T11:05:43Z] 3628403e || INFO: container failed with non-zero exit code: 132 (exit code 132)\n",
    )
    assert confident(ranked) and ranked[0].entry.family == "version_skew"


# --- a temporary checkpoint shard that is not there


@pytest.mark.parametrize(
    "line",
    [
        "NotFoundError (see above for traceback): ./run/model.ckpt-0_temp_994ae96906954e838fc2f3481ce8f296/"
        "part-00001-of-00002.data-00000-of-00001",
        "W op_kernel.cc:1318] Not found: /ckpt/model.ckpt-200_temp_0123abcd/part-00000-of-00002.data-00000-of-00001",
    ],
)
def test_a_missing_temporary_checkpoint_shard_is_a_missing_checkpoint(line):
    assert "checkpoint_missing" in shapes_in(line)


def test_a_data_shard_of_a_dataset_is_no_checkpoint():
    assert "checkpoint_missing" not in shapes_in("NotFoundError: /data/train/part-00001-of-00002.data-00000-of-00001")


def test_a_missing_temporary_checkpoint_shard_alone_reads_as_a_checkpoint_failure(rank_log):
    """Before: "no match" (the training case tf-6374: the ps tasks do not share the directory)."""
    ranked = rank_log(
        name="worker-0.log",
        text="NotFoundError (see above for traceback): ./supervisor/model.ckpt-0_temp_994ae96906954e838fc2f3481ce8f296/"
        "part-00001-of-00002.data-00000-of-00001\n",
    )
    assert confident(ranked) and ranked[0].entry.family == "checkpoint"
