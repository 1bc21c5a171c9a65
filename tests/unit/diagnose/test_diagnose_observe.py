"""Reading one worker's lines into errors, exits, steps and hang lines: JSON
events, Python exceptions, TF's C++ log lines (TF 2.20, older 2.x and 1.x
formats), gRPC details and kubectl's text. The non-default-version lines are
written after the shapes seen in public TF issue threads, not copied."""

from __future__ import annotations

import json

import pytest

from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observe import observe
from chaos.diagnose.read_events import error_cls
from chaos.workload.grammar import line_time


def log(*lines: str, name: str = "worker-0") -> WorkerLog:
    return WorkerLog(name, f"{name}.log", tuple(lines), tuple(range(1, len(lines) + 1)))


def errors(*lines: str):
    return [(error_cls(e), e.message) for e in observe(log(*lines)).errors]


def test_python_exception_with_its_message_going_on_over_lines():
    found = errors(
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Socket closed",
        "Additional GRPC error information from remote target /job:worker/replica:0/task:1",
        "2026-01-01 00:00:00.000001: I tensorflow/core/foo.cc:1] next record",
    )
    assert found[0] == (
        "UnavailableError",
        "Collective ops is aborted by: Socket closed\nAdditional GRPC error information from remote target /job:worker/replica:0/task:1",
    )


def test_json_error_event_and_the_same_error_as_text_count_once():
    event = {
        "event": "error",
        "error_class": "tensorflow.python.framework.errors_impl.InternalError",
        "message": "Collective instance 112 expected type 1",
        "source": "worker-0",
        "t": 10.0,
    }
    found = errors(json.dumps(event))
    assert found == [("InternalError", "Collective instance 112 expected type 1")]


@pytest.mark.parametrize(
    "line, cls, message",
    [
        # TF 2.20 (measured here)
        (
            "2026-11-25 09:18:55.853680: E tensorflow/core/common_runtime/base_collective_executor.cc:248] "
            "BaseCollectiveExecutor::StartAbort UNAVAILABLE: Socket closed",
            "UnavailableError",
            "Socket closed",
        ),
        # TF 1.x / early 2.x: the status in words
        (
            "2019-02-03 04:05:06.000007: E tensorflow/core/common_runtime/ring_reducer.cc:300] Aborting RingReduce with "
            "Unavailable: Socket closed",
            "UnavailableError",
            "Socket closed",
        ),
        (
            "W tensorflow/core/distributed_runtime/master_session.cc:10] Deadline exceeded: session timed out",
            "DeadlineExceededError",
            "session timed out",
        ),
        (
            "E tensorflow/core/common_runtime/bfc_allocator.cc:1] Resource exhausted: OOM when allocating tensor with shape[1024]",
            "ResourceExhaustedError",
            "OOM when allocating tensor with shape[1024]",
        ),
        # early TF 2.x with a thread id, the status quoted inside a sentence
        (
            "2021-01-02 03:04:05.000006: W    77 tensorflow/core/distributed_runtime/rpc/grpc_remote_master.cc:160] "
            'RPC failed with status = "Unavailable: Socket closed" and more',
            "UnavailableError",
            'Socket closed" and more',
        ),
        # absl-formatted TF 2.x line
        (
            "E0203 04:05:06.000007  4242 ring_alg.cc:291] Aborting RingReduce with UNAVAILABLE: failed to connect to all addresses",
            "UnavailableError",
            "failed to connect to all addresses",
        ),
        # gRPC's detail, from Python's grpc or TF's message
        (
            '\tdebug_error_string = "{"created":"@1.5","description":"Failed to pick subchannel","grpc_message":"failed to '
            'connect to all addresses","grpc_status":14}"',
            "UnavailableError",
            "failed to connect to all addresses",
        ),
        (
            ':UNKNOWN:Error received from peer  {grpc_message:"Socket closed", grpc_status:14}',
            "UnavailableError",
            "Socket closed",
        ),
        # an exception reported in a logged sentence (parameter-server strategies)
        (
            "ERROR:tensorflow:/job:worker/task:1 failed when processing closure: UnavailableError():Graph execution error:",
            "UnavailableError",
            "Graph execution error:",
        ),
        # a C++ error line that names no status
        (
            "E0203 04:05:06.000007  42 grpc_util.cc:9] failed to connect to all addresses; last error: Connection refused",
            "",
            "failed to connect to all addresses; last error: Connection refused",
        ),
        # TF 2.18's wording of a lost heartbeat (2.20: "stopped sending heartbeats"), no status
        (
            "E1125 20:30:01.000007  42 coordination_service.cc:1] Task /job:worker/replica:0/task:1 heartbeat timeout.",
            "",
            "Task /job:worker/replica:0/task:1 heartbeat timeout.",
        ),
    ],
)
def test_error_lines_of_several_tf_versions(line, cls, message):
    assert errors(line) == [(cls, message)]


@pytest.mark.parametrize(
    "line",
    [
        "2026-11-25 09:18:53.238344: I tensorflow/coordination_service.cc:506] Waiting for 1/2 tasks to connect.",
        "INFO:tensorflow:loss = 3.7, step = 100 (5.0 sec)",
        "Epoch 1/5",
        "The Internal: word, in a sentence about an error",
    ],
)
def test_ordinary_lines_are_no_errors(line):
    assert errors(line) == []


@pytest.mark.parametrize(
    "line, code, oom",
    [
        ("command terminated with exit code 137", 137, False),
        ("    Exit Code:    137", 137, False),
        ("      Reason:       OOMKilled", None, True),
        ("Killed", 137, False),
        ("Aborted (core dumped)", 134, False),
        ("worker exited with code 1", 1, False),
        ('{"event":"exit","exit_code":137,"oom_killed":true,"source":"worker-1","t":3.0}', 137, True),
    ],
)
def test_exits(line, code, oom):
    exits = observe(log(line)).exits
    assert [(e.exit_code, e.oom_killed) for e in exits] == [(code, oom)]


def test_tf1_create_session_wait_is_a_hang_line():
    obs = observe(
        log(
            "2018-01-02 03:04:05.000001: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:1",
            "2018-01-02 03:04:15.000001: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting for response from worker: /job:worker/replica:0/task:1",
        )
    )
    assert len(obs.generations[0].hang_lines) == 2 and obs.generations[0].hang_lines[0][0] is not None


def test_restart_events_split_generations():
    def step(s, t):
        return json.dumps({"event": "step", "step": s, "t": t, "source": "worker-0"})

    obs = observe(
        log(step(1, 1.0), step(2, 1.1), '{"event":"restart","reason":"x","source":"worker-0","t":5.0}', step(3, 9.0))
    )
    assert [len(g.steps) for g in obs.generations] == [2, 1]


def test_keras_step_times_are_read():
    obs = observe(log("20/20 [====] - 1s 5ms/step - loss: 0.5", "20/20 [====] - 1s 21ms/step - loss: 0.4"))
    assert obs.generations[0].step_ms == [5.0, 21.0]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("2026-11-25 09:18:55.852767: E foo", 1795598335.852767),
        ("2026-11-25T09:18:55.5Z kubectl --timestamps", 1795598335.5),
        ("I0000 00:00:1795598333.208476       6 grpc_server_lib.cc:466] Started server", 1795598333.208476),
        ("no time here", None),
        ("2026-13-45 99:99:99 not a date", None),
    ],
)
def test_line_time(line, expected):
    got = line_time(line)
    assert got == pytest.approx(expected) if expected is not None else got is None


def test_an_error_after_the_worker_said_done_is_its_shutdown_not_a_symptom():
    done = json.dumps({"event": "done", "step": 500, "epoch": 4, "t": 10.0, "source": "worker-1"})
    late = json.dumps(
        {
            "event": "error",
            "error_class": "tensorflow.python.framework.errors_impl.UnavailableError",
            "message": "Socket closed",
            "source": "worker-1",
            "t": 10.4,
        }
    )
    early = json.dumps({**json.loads(late), "t": 9.0})
    assert errors(done, late) == []
    assert errors(early, done, late) == [("UnavailableError", "Socket closed")]
    # A new life of the process (a restart) is judged afresh.
    restart = '{"event":"restart","reason":"x","source":"worker-1","t":20.0}'
    step = json.dumps({"event": "step", "step": 500, "t": 9.9, "source": "worker-1"})
    assert errors(step, done, restart, json.dumps({**json.loads(late), "t": 25.0})) == [
        ("UnavailableError", "Socket closed")
    ]


def test_lines_of_no_stamp_right_after_done_are_its_shutdown_too():
    """Seen in a passing connection-reset run: worker-1 printed TF's untimed `ERROR:tensorflow:Couldn't
    match files for checkpoint /backup/chief/ckpt-5` after its done event (the chief had cleared its
    backup); dated by the line before it, the done event itself, it is no failure of the run."""
    done = json.dumps({"event": "done", "step": 100, "epoch": 4, "t": 10.0, "source": "worker-1"})
    shutdown = "ERROR:tensorflow:Couldn't match files for checkpoint /backup/chief/ckpt-5"
    worker = observe(log(done, shutdown, "tensorflow.python.framework.errors_impl.NotFoundError: gone"))
    assert worker.errors == [] and worker.flagged == []
    before = observe(log(shutdown, done))
    assert [names for _, names in before.flagged] != []  # the same line before done is a shape


def test_after_the_runners_stop_event_the_exit_and_the_lines_are_the_stop_not_the_failure():
    """The runner stops a worker the failure left running, to restart it (SIGTERM, then SIGKILL):
    its stop event says so, so the SIGTERM's lines and the exit of any code are its teardown,
    never a kill or a preemption of the job's own (a CI run read one as preempted-worker)."""
    from chaos.diagnose.attribution import TEARDOWN, attribute
    from chaos.diagnose.observe import observe_all

    step = json.dumps({"event": "step", "step": 5, "epoch": 0, "t": 10.0, "source": "worker-0", "loss": 0.5})
    stop = json.dumps({"event": "stop", "reason": "worker-1 failed", "t": 30.0, "source": "worker-0"})
    sigterm = "2026-01-01 00:00:31.000000: W tensorflow/core/x.cc:1] PreemptionCheckpointHandler: received SIGTERM"
    gone = json.dumps({"event": "exit", "exit_code": 143, "t": 31.0, "source": "worker-0"})
    stopped = observe_all([log(step, stop, sigterm, gone)])
    (gen,) = stopped[0].generations
    assert gen.exits == [] and gen.teardown_exits == 1 and [e.exit_code for e in gen.torn] == [143]
    assert stopped[0].flagged == []
    (cycle,) = attribute(stopped)
    assert [(x.role, x.why) for x in cycle.teardown] == [
        (TEARDOWN, "after the runner's stop line (to restart it): its stop, not the failure's")
    ]
    # The control: with no stop event, the same exit is the worker's own.
    (own,) = observe_all([log(step, sigterm, gone)])[0].generations
    assert [e.exit_code for e in own.exits] == [143] and own.teardown_exits == 0
