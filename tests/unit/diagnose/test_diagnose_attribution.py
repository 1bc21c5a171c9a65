"""Root, cascade, teardown (chaos/diagnose/attribution.py): each rule on the
smallest logs that need it, and on the real excerpts of the framework's runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.diagnose.attribution import (
    CASCADE,
    KILL_MARGIN_S,
    ROOT,
    TEARDOWN,
    attribute,
    blamed,
    first_failure,
    is_effect,
)
from chaos.diagnose.logs import WorkerLog, read_logs, split_dump
from chaos.diagnose.observe import observe_all

LOGS = Path(__file__).parent / "logs"
T0 = 1_795_600_000.0


def ev(kind: str, source: str, t: float, **fields) -> str:
    return json.dumps({"event": kind, "source": source, "t": T0 + t, **fields}, sort_keys=True)


def step(source: str, t: float, n: int) -> str:
    return ev("step", source, t, step=n, epoch=0, loss=1.0, local_loss=1.0, batch_digest=f"{n:016x}")


def err(source: str, t: float, cls: str, message: str) -> str:
    return ev("error", source, t, error_class=cls, message=message)


def exit_(source: str, t: float, code: int, oom: bool = False) -> str:
    return ev("exit", source, t, exit_code=code, oom_killed=oom)


def logs(**by_worker: list[str]) -> list[WorkerLog]:
    return [
        WorkerLog(
            name.replace("_", "-"), f"{name.replace('_', '-')}.log", tuple(lines), tuple(range(1, len(lines) + 1))
        )
        for name, lines in by_worker.items()
    ]


def first(worker_logs: list[WorkerLog]):
    return first_failure(attribute(observe_all(worker_logs)))


SOCKET = "Collective ops is aborted by: Socket closed\nAdditional GRPC error information from remote target /job:worker/replica:0/task:1"


def killed_worker_1(kill_t: float = 5.2) -> list[WorkerLog]:
    return logs(
        worker_0=[
            step("worker-0", 1, 1),
            step("worker-0", 2, 2),
            err("worker-0", 5.0, "tensorflow.python.framework.errors_impl.UnavailableError", SOCKET),
            exit_("worker-0", 6, 1),
        ],
        worker_1=[step("worker-1", 1, 1), step("worker-1", 2, 2), exit_("worker-1", kill_t, 137)],
    )


# --- which lines are effects ------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, message, effect",
    [
        ("UnavailableError", "Socket closed", True),
        ("DeadlineExceededError", "Deadline Exceeded", True),
        ("CancelledError", "CANCELLED", True),
        ("InternalError", "Collective ops is aborted by: Error reported from /job:worker/task:1", True),
        ("", "failed to connect to all addresses", True),
        ("IndexError", "Read less bytes than requested", False),
        ("JSONDecodeError", "Expecting ',' delimiter", False),
        ("ResourceExhaustedError", "OOM when allocating tensor with shape[2048,2048]", False),
        ("UnavailableError", "OOM when allocating tensor", False),  # its own memory, whatever the class
    ],
)
def test_an_effect_is_a_peers_error_or_one_that_names_its_cause_elsewhere(cls, message, effect):
    assert is_effect(cls, message) is effect


def test_the_task_a_line_blames_is_the_first_it_names_but_not_its_own_device():
    assert blamed("from remote target /job:worker/replica:0/task:1 while calling", 0) == ("worker-1",)
    assert (
        blamed("{{function_node __wrapped__CollectiveBcastRecv_device_/job:worker/replica:0/task:1/device:CPU:0}}", 1)
        == ()
    )
    assert blamed("remote target /job:ps/replica:0/task:0", 0) == ("ps-0",)
    assert blamed("/job:chief/replica:0/task:0 is down", 1) == ("worker-0",)


# --- root -------------------------------------------------------------------------------------


def test_a_killed_worker_is_the_root_and_its_peers_errors_are_cascade():
    a = first(killed_worker_1())
    assert (a.root_worker, a.sure, a.root.what) == ("worker-1", True, "exit 137 (SIGKILL)")
    assert {(c.worker, c.role) for c in a.cascade} == {("worker-0", CASCADE)}
    assert a.teardown == ()


def test_the_peers_error_first_in_time_is_still_not_the_root():
    # measured: the chief's Socket closed 0.16 s before the runner saw worker-1's exit
    a = first(killed_worker_1(kill_t=5.16))
    assert a.root_worker == "worker-1" and a.root.t > a.cascade[0].t


def test_a_kill_long_after_the_failure_blamed_by_no_one_is_teardown():
    worker_logs = logs(
        worker_0=[
            step("worker-0", 1, 1),
            err("worker-0", 2, "IndexError", "Read less bytes than requested"),
            exit_("worker-0", 3, 1),
        ],
        worker_1=[step("worker-1", 1, 1), exit_("worker-1", 2 + KILL_MARGIN_S + 20, 137)],
    )
    a = first(worker_logs)
    assert (a.root_worker, a.sure) == ("worker-0", True)
    assert [(t.worker, t.role) for t in a.teardown] == [("worker-1", TEARDOWN)]


def test_a_late_kill_of_the_worker_the_peers_lost_is_teardown_and_the_root_only_likely():
    # latency beyond the collective timeout: the chief loses worker-1, the runner stops the hung worker 30 s later
    a = first(killed_worker_1(kill_t=5 + KILL_MARGIN_S + 25))
    assert (a.root_worker, a.sure, a.root) == ("worker-1", False, None)
    assert [(t.worker, t.role) for t in a.teardown] == [("worker-1", TEARDOWN)]


def test_a_kill_while_the_job_hung_at_bring_up_is_teardown():
    a = first(read_logs([LOGS / "tf-config-malformed-fails-one-worker-and-hangs-the-chief"])[0])
    assert (a.root_worker, a.sure) == ("worker-1", True)
    assert a.root.what.startswith("JSONDecodeError")
    assert [(t.worker, t.what) for t in a.teardown] == [("worker-0", "exit 137 (SIGKILL)")]
    assert a.before_first_step


def test_exits_after_the_runners_teardown_line_are_teardown():
    teardown = ev("phase", "runner", 30, phase="teardown")
    worker_logs = logs(
        worker_0=[
            step("worker-0", 1, 1),
            err("worker-0", 2, "ValueError", "bad input"),
            teardown,
            exit_("worker-0", 31, 137),
        ],
        worker_1=[step("worker-1", 1, 1), teardown, exit_("worker-1", 31, 137)],
    )
    a = first(worker_logs)
    assert a.root_worker == "worker-0"
    assert sorted(t.worker for t in a.teardown) == ["worker-0", "worker-1"]
    assert all("teardown line" in t.why for t in a.teardown)


def test_the_same_error_of_its_own_on_every_worker_is_no_root_worker():
    worker_logs = logs(
        **{
            f"worker_{i}": [
                ev("start", f"worker-{i}", 0, tf_version="2.21"),
                err(f"worker-{i}", 10 + i, "IndexError", "Read less bytes than requested"),
                exit_(f"worker-{i}", 11 + i, 1),
            ]
            for i in range(2)
        }
    )
    a = first(worker_logs)
    assert a.root_worker is None and a.sure and "every worker raised the same error" in a.no_root
    assert [(r.role, r.worker) for r in a.roots if "exit" not in r.what] == [(ROOT, "worker-0"), (ROOT, "worker-1")]


def test_two_different_errors_of_their_own_name_the_first_but_not_sure():
    worker_logs = logs(
        worker_0=[step("worker-0", 1, 1), err("worker-0", 4, "ValueError", "shapes differ")],
        worker_1=[step("worker-1", 1, 1), err("worker-1", 3, "ResourceExhaustedError", "OOM when allocating")],
    )
    a = first(worker_logs)
    assert (a.root_worker, a.sure) == ("worker-1", False)
    assert any("worker-0 failed on its own" in u for u in a.untold)


TYPE_MISMATCH = "Collective instance 112 expected type 1 and data_type 9 but got type 1 and data_type 1"


def mismatch_run(odd_tf: str) -> list[WorkerLog]:
    """As version-skew-tf215-... ran in CI: the chief compares, and its C++ line states the mismatch as
    its own error; both workers' Python errors then say the collective was aborted by it."""

    def start(source: str, tf: str) -> str:
        return ev("start", source, 0, tf_version=tf, fingerprint={"tf_version": tf, "pkg:tensorflow-cpu": tf})

    aborted = "Collective ops is aborted by: " + TYPE_MISMATCH
    return logs(
        worker_0=[
            start("worker-0", "2.21.0"),
            f"E0000 00:00:{T0 + 1:.6f}     120 base_collective_executor.cc:252] "
            f"BaseCollectiveExecutor::StartAbort INTERNAL: {TYPE_MISMATCH}",
            err("worker-0", 1.1, "InternalError", aborted + " [Op:CollectiveBcastSend]"),
            exit_("worker-0", 2, 1),
        ],
        worker_1=[
            start("worker-1", odd_tf),
            err("worker-1", 1.2, "InternalError", aborted + " grpc_status:13 [Op:CollectiveBcastRecv]"),
            exit_("worker-1", 2, 1),
        ],
    )


def test_a_collective_mismatch_is_the_odd_environments_doing_not_the_comparers():
    """version-skew-tf215-...: whichever worker compares raises the mismatch (CI of 2026-12-07: the
    chief, named the root for sure); with one worker's environment odd, that worker is the likely root."""
    a = first(mismatch_run(odd_tf="2.15.1"))
    assert (a.root_worker, a.sure) == ("worker-1", False)
    assert a.root is None and {c.worker for c in a.cascade} == {"worker-0", "worker-1"}
    assert any("worker-1's environment differs" in u for u in a.untold)
    # the control: the same errors with one environment are the comparer's own, as before
    same = first(mismatch_run(odd_tf="2.21.0"))
    assert (same.root_worker, same.sure) == ("worker-0", True)


def test_only_peers_errors_name_a_likely_root_never_a_sure_one():
    for name in (
        "paused-worker-times-out-then-recovers",
        "connection-reset-mid-training-aborts-then-recovers",
        "stream-cut-after-64k-aborts-then-recovers",
        "mtu-blackhole-at-bring-up-times-out-the-first-broadcast-then-recovers",
    ):
        a = first(read_logs([LOGS / name])[0])
        assert a.root is None and not a.sure, name
        assert a.root_worker in ("worker-1", None), name  # the faulted one, or cannot tell
        assert a.cascade and all(c.role == CASCADE for c in a.cascade)


def test_peers_that_blame_each_other_at_once_cannot_tell():
    # a partition: each side loses the other within a second
    a = first(read_logs([LOGS / "partitioned-worker-fails-then-recovers"])[0])
    assert a.root_worker is None and not a.sure
    assert any("name different tasks" in u for u in a.untold)


def test_a_hang_at_bring_up_names_no_root():
    # the straggler the chief lists is the one that could not connect: its own fault or the chief's port
    a = first(read_logs([LOGS / "tf-config-localhost-peers-hangs-at-bring-up"])[0])
    assert a.root_worker is None and not a.sure
    assert any("hang at bring-up" in u for u in a.untold)


@pytest.mark.parametrize(
    "name, root",
    [
        ("killed-worker-recovers-from-checkpoint", "worker-1"),
        ("host-oom-kills-worker-then-recovers", "worker-1"),
        ("tf-config-malformed-fails-one-worker-and-hangs-the-chief", "worker-1"),
    ],
)
def test_the_real_excerpts_name_the_faulted_worker(name, root):
    a = first(read_logs([LOGS / name])[0])
    assert (a.root_worker, a.sure) == (root, True)


@pytest.mark.parametrize(
    "name",
    [
        "packet-corrupt-5pct-is-caught-by-the-tcp-checksum-and-trains-on-bit-exact",
        "packet-reorder-25pct-on-one-worker-trains-on-bit-exact",
        "ld-library-path-skew-trains-silently-caught-by-fingerprint",
    ],
)
def test_a_run_that_did_not_fail_has_nothing_to_attribute(name):
    assert first(read_logs([LOGS / name])[0]) is None


# --- bad input --------------------------------------------------------------------------------

CHIEF_LOST_TASK_1 = """\
2026-11-25 09:18:55.852767: E tensorflow/core/common_runtime/ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: Socket closed
Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling /tensorflow.WorkerService/RecvBuf:
"""


def test_one_unlabelled_stream_is_never_sure():
    a = first(split_dump(CHIEF_LOST_TASK_1, "job.log", "job"))
    assert not a.sure and a.root_worker == "worker-1"
    assert any("whose name says no worker" in u for u in a.untold)


def test_interleaved_lines_of_two_workers_in_one_stream_are_never_sure():
    mixed = (
        "2026-11-25 09:18:55.100000: I tensorflow/core/x.cc:1] step 55\n"
        "2026-11-25 09:18:55.300000: E tensorflow/core/x.cc:1] worker 1: IndexError: Read less bytes than requested\n"
        + CHIEF_LOST_TASK_1
    )
    a = first(split_dump(mixed, "job.log", "job"))
    assert a.failed and not a.sure


def test_a_truncated_log_says_what_it_could_not_tell():
    cut = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "tensorflow.python.framework.errors_impl.UnavailableError: Socket cl"
    )
    a = first(split_dump(cut, "worker-0.log", "worker-0"))
    assert a.root_worker is None and not a.sure and a.cascade
    assert any("none naming the task" in u for u in a.untold)


def test_logs_from_one_worker_name_the_peer_it_lost_as_likely():
    a = first(split_dump(CHIEF_LOST_TASK_1, "worker-0.log", "worker-0"))
    assert (a.root_worker, a.sure) == ("worker-1", False)
    assert any("only worker-0's log" in u for u in a.untold)


def test_one_workers_own_error_is_its_root_as_far_as_its_lines_go():
    own = "tensorflow.python.framework.errors_impl.NotFoundError: Unsuccessful TensorSliceReader constructor\n"
    a = first(split_dump(own, "worker-0.log", "worker-0"))
    assert (a.root_worker, a.sure) == ("worker-0", False)


def test_a_kubectl_dump_with_pod_names_names_the_pod_or_says_it_cannot_match_a_task():
    dump = (
        "[pod/trainer-x7k2p/tensorflow] 2026-11-25 09:18:50.000000: I x.cc:1] step 10\n"
        "[pod/trainer-q9z8m/tensorflow] 2026-11-25 09:18:50.000000: I x.cc:1] step 10\n"
        + "".join(f"[pod/trainer-q9z8m/tensorflow] {line}\n" for line in CHIEF_LOST_TASK_1.splitlines())
    )
    a = first(split_dump(dump, "job.log", "job"))
    assert a.root_worker == "worker-1" and not a.sure
    assert any("no log of that name was given" in u for u in a.untold)
    oom = (
        "[pod/trainer-x7k2p/tensorflow] 2026-11-25 09:18:54.000000: E x.cc:1] ResourceExhaustedError: "
        "OOM when allocating tensor with shape[4096,4096]\n"
        + "".join(f"[pod/trainer-q9z8m/tensorflow] {line}\n" for line in CHIEF_LOST_TASK_1.splitlines())
    )
    a = first(split_dump(oom, "job.log", "job"))
    assert (a.root_worker, a.sure) == ("trainer-x7k2p", True)


# --- one stream: the line's own tag, and who the others wait for ------------------------------


def test_the_reporter_and_the_ops_own_device_are_not_blamed():
    line = (
        "ERROR:tensorflow:/job:worker/task:2 encountered the following error when processing closure: "
        "UnavailableError():Socket closed\nAdditional GRPC error information from remote target "
        "/job:ps/replica:0/task:0/device:CPU:0:"
    )
    assert blamed(line, None) == ("ps-0",)
    assert blamed("Remote function on worker /job:worker/replica:0/task:1 failed with UnavailableError()", None) == ()
    assert blamed(
        '[[Node: _Recv[recv_device="/job:worker/replica:0/task:0/cpu:0", send_device="/job:ps/replica:0/task:0/cpu:0"]]',
        0,
    ) == ("ps-0",)


@pytest.mark.parametrize(
    "text, root",
    [
        (
            "[1,4]<stdout>:gpu7:4105:4372 [0] include/socket.h:318 NCCL WARN Net : Socket creation failed : Address family not supported by protocol\n",
            "rank 4",
        ),
        (
            "tensorflow.python.framework.errors_impl.DataLossError: From /job:ps/replica:0/task:3:\nChecksum does not match\n",
            "ps-3",
        ),
        ("mpirun noticed that process rank 7 with PID 0 on node gpu7 exited on signal 9 (Killed).\n", "rank 7"),
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor on /job:ps/replica:0/task:0/device:CPU:0\n",
            "ps-0",
        ),
        (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor on /job:localhost/replica:0/task:0/device:GPU:0\n",
            None,
        ),
    ],
)
def test_a_root_line_in_one_unlabelled_stream_names_the_worker_its_own_tag_says(text, root):
    a = first(split_dump(text, "job.log", "job"))
    assert a.root is not None and a.root_worker == root and not a.sure


def test_horovods_stall_lines_are_the_others_waiting_for_the_rank_that_is_missing():
    text = (
        "[1,0]<stderr>:[2019-04-13 13:53:31.851506: W horovod/common/operations.cc:588] "
        "HorovodBroadcast_global_step_0 [missing ranks: 1]\n"
    )
    a = first(split_dump(text, "job.log", "job"))
    assert a.root is None and a.root_worker == "rank 1" and not a.sure
    assert all(c.role == CASCADE for c in a.cascade)


def test_a_wait_for_a_task_that_never_answers_names_it_as_likely():
    text = (
        "2018-03-02 08:50:57.918293: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still "
        "waiting for response from worker: /job:ps/replica:0/task:0\n"
    )
    a = first(split_dump(text, "worker-0.log", "worker-0"))
    assert (a.root_worker, a.sure, a.root) == ("ps-0", False, None)


def test_on_the_field_corpus_no_root_is_named_sure_and_none_named_is_wrong(tmp_path):
    """Each case is one file as a user gives it: never sure (one stream), and where the thread says
    which worker it was (``root_worker``), a worker named is that one (benchmarks/diagnose_accuracy.py
    prints the figure)."""
    import yaml

    from chaos.diagnose.observe import observe_files

    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "diagnose_field" / "corpus.yaml"
    cases = yaml.safe_load(corpus.read_text(encoding="utf-8"))
    right = 0
    for case in cases:
        path = tmp_path / f"{case['id']}.log"
        path.write_text(case["log"], encoding="utf-8")
        a = first_failure(attribute(observe_files([path])[0]))
        if a is None:
            continue
        assert not a.sure, case["id"]
        if case.get("root_worker") and a.root_worker is not None:
            assert a.root_worker == case["root_worker"], case["id"]
            right += 1
    assert right >= 24  # 16 when the labels came; 21 before issue 40's launcher and NCCL-chain rules


def test_a_first_peer_error_that_names_its_own_task_cannot_tell():
    # tf-config-duplicate-index (run of 2026-12-02): worker-1 claims task 0; the chief is failed for it
    message = (
        "Barrier failed because: task is set to ERROR: ABORTED: /job:worker/replica:0/task:0 unexpectedly "
        "tried to connect with a different incarnation"
    )
    worker_logs = logs(
        worker_0=[err("worker-0", 1, "InternalError", message), exit_("worker-0", 2, 1)],
        worker_1=[ev("start", "worker-1", 0, tf_version="2.21")],
    )
    a = first(worker_logs)
    assert a.root is None and a.root_worker is None and any("own task" in u for u in a.untold)


def test_a_warning_a_worker_lived_through_to_its_done_is_no_failure():
    worker_logs = logs(
        worker_0=[step("worker-0", 1, 1), ev("done", "worker-0", 3, step=1), exit_("worker-0", 4, 0)],
        worker_1=[
            step("worker-1", 1, 1),
            "WARNING:tensorflow:NotFoundError: /backup/chief/checkpoint; No such file or directory",
            ev("done", "worker-1", 3, step=1),
            exit_("worker-1", 4, 0),
        ],
    )
    assert first(worker_logs) is None


def test_a_killed_parameter_server_that_never_steps_is_the_root_not_a_hung_bring_up():
    # killed-parameter-server (run of 2026-12-02): the ps slot waits at bring-up, never steps, is SIGKILLed
    worker_logs = logs(
        worker_0=[
            step("worker-0", 1, 1),
            err("worker-0", 5.1, "UnavailableError", "Socket closed\nremote target /job:ps/replica:0/task:0"),
            exit_("worker-0", 6, 1),
        ],
        worker_3=[
            "I0000 00:00:1795600000.000000 7 grpc_server_lib.cc:466] Started server with target: grpc://proxy:23603",
            exit_("worker-3", 5.2, 137),
        ],
    )
    a = first(worker_logs)
    assert (a.root_worker, a.sure) == ("worker-3", True) and a.teardown == ()


def test_an_error_the_worker_trained_on_after_is_no_root():
    """Seen in a port-refused run under load (2026-12-02): worker-1 read the chief's backup index
    while the chief rewrote it, TF warned and trained on; that warning was named the root line."""
    torn_read = (
        'WARNING:tensorflow:ParseError: 5:1 : Message type "tensorflow.CheckpointState" has no field named "all_mode".'
    )
    worker_logs = logs(
        worker_0=[
            step("worker-0", 1, 1),
            step("worker-0", 2, 2),
            step("worker-0", 3, 3),
            err("worker-0", 5.0, "tensorflow.python.framework.errors_impl.UnavailableError", SOCKET),
            exit_("worker-0", 6, 1),
        ],
        worker_1=[
            step("worker-1", 1, 1),
            torn_read,  # a plain line: no time of its own, placed by its line
            step("worker-1", 2, 2),
            step("worker-1", 3, 3),
            exit_("worker-1", 5.2, 137),
        ],
    )
    a = first(worker_logs)
    assert (a.root_worker, a.root.what) == ("worker-1", "exit 137 (SIGKILL)"), a
    # The same warning as the process's last words (no step after it) is still read as its error.
    worker_logs[1] = logs(worker_1=[step("worker-1", 1, 1), torn_read])[0]
    assert "ParseError" in first(worker_logs).root.what


# --- the op's record under a TF error, and a Horovod rank not ready ------------------------------

NODE_OOM = [
    "INFO:tensorflow:Started 0 queues for processing input data.",
    "E tensorflow/core/client/tensor_c_api.cc:485] OOM when allocating tensor with shape[2048,1001]",
    '\t [[Node: grad/mul = Mul[T=DT_FLOAT, _device="/job:worker/replica:0/task:0/gpu:2"](a, b)]]',
    '\t [[Node: AddN_S3319 = _Recv[recv_device="/job:ps/replica:0/task:3/cpu:0", '
    'send_device="/job:worker/replica:0/task:0/gpu:2", tensor_type=DT_FLOAT]()]]',
]


def test_an_own_error_in_one_unnamed_stream_is_tagged_by_the_device_of_its_op():
    """TF prints the op an OOM ran under it: its _device names the task, where the stream does not."""
    a = first(logs(job=NODE_OOM))
    assert a.root_worker == "worker-0" and "OOM" in a.root.what and not a.sure, a
    # Without the op's line nothing in the lines says whose it was.
    assert first(logs(job=NODE_OOM[:2])).root_worker is None


def test_a_receive_that_lost_its_peer_blames_the_send_device_two_lines_down():
    """A gRPC status wrapped over two lines (TF 1.x) puts the _Recv's record on the third."""
    lines = [
        'W tensorflow/core/framework/op_kernel.cc:993] Unavailable: {"created":"@1487751897.19","description":"EOF",'
        '"file":"tcp_posix.c","file_line":',
        '235,"grpc_status":14}',
        '         [[Node: Assign_1_S295 = _Recv[recv_device="/job:worker/replica:0/task:0/cpu:0", '
        'send_device="/job:ps/replica:0/task:0/cpu:0", tensor_type=DT_INT64]()]]',
    ]
    a = first(logs(job=lines))
    assert a.root_worker == "ps-0" and not a.sure, a
    # Further down is the next record's: it blames no one.
    assert first(logs(job=[*lines[:2], "INFO:tensorflow:x", "INFO:tensorflow:y", lines[2]])).root_worker is None


@pytest.mark.parametrize(
    "ready, named",
    [("5, 6, 3, 1, 4, 0", "rank 2"), ("5, 6, 3, 1, 0", None)],  # one gap below the top ready rank; two
)
def test_one_rank_missing_among_the_ready_ones_is_the_likely_root(ready, named):
    line = f"Stalled ops: HorovodBroadcast_weights_0 [ready ranks: {ready}]"
    a = first(logs(job=[line]))
    assert a.root_worker == named and not a.sure, a


# --- the odd environment: a version mismatch names the comparer, the fingerprints the odd one ------------

MISMATCH = (
    "Collective instance 112 expected type 1 and data_type 1 but got type 1 and data_type 9\n"
    "Additional GRPC error information from remote target /job:worker/replica:0/task:0 while calling "
    "/tensorflow.WorkerService/CompleteInstance"
)


def skewed(versions: list[str]) -> list[WorkerLog]:
    """Every worker starts on its TF; the last raises the leader's mismatch (naming task 0), the rest lose it."""
    last = len(versions) - 1
    by = {}
    for i, tf in enumerate(versions):
        lines = [ev("start", f"worker-{i}", 0, tf_version=tf, fingerprint={"pkg:tensorflow-cpu": tf})]
        if i == last:
            lines.append(err(f"worker-{i}", 2.0, "InternalError", MISMATCH))
        else:
            lines.append(err(f"worker-{i}", 5.0, "UnavailableError", f"Error reported from /job:worker/task:{last}"))
        lines.append(exit_(f"worker-{i}", 5.5, 1))
        by[f"worker_{i}"] = lines
    return logs(**by)


def test_a_version_mismatch_names_the_worker_whose_environment_differs_as_likely():
    # the real run: worker-1 on TF 2.15, the chief on 2.21; the mismatch comes back from the chief's CompleteInstance
    a = first(read_logs([LOGS / "version-skew-tf215-aborts-first-collective-then-recovers"])[0])
    assert (a.root_worker, a.sure) == ("worker-1", False)
    said = next(u for u in a.untold if "environment differs" in u)
    assert "tf_version 2.15.1 (others 2.21.0)" in said and "the chief's is the job's" in said
    # three workers, the odd one last: the fingerprint two share is the reference
    a = first(skewed(["2.21", "2.21", "2.15"]))
    assert (a.root_worker, a.sure) == ("worker-2", False)
    assert any("the one the others share" in u for u in a.untold)
    # the odd one is the chief: the others' shared fingerprint still names it
    a = first(skewed(["2.15", "2.21", "2.21"]))
    assert a.root_worker == "worker-0"


def test_environments_that_name_no_single_odd_worker_leave_the_peers_errors_to_tell():
    # every worker on its own TF: no reference, so the first peer error's task (worker-0) stands, as before
    a = first(skewed(["2.21", "2.19", "2.15"]))
    assert a.root_worker == "worker-0" and not any("environment differs" in u for u in a.untold)
    # the same environment everywhere: no skew to read
    a = first(skewed(["2.21", "2.21"]))
    assert a.root_worker == "worker-0" and not any("environment differs" in u for u in a.untold)
