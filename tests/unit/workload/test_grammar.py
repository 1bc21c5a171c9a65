"""One grammar of a worker's log lines (chaos.workload.grammar), read by a run of
a job without the agent (chaos.workload.logparse) and by chaos diagnose
(chaos.diagnose.observe). The cases are where their two grammars disagreed
before they were one: each reader now reads both kinds. The lines are real
ones from the field corpus (tests/fixtures/diagnose_field/corpus.yaml) where
it has them."""

from __future__ import annotations

import pytest

from chaos.diagnose.logs import WorkerLog
from chaos.diagnose.observe import observe
from chaos.diagnose.read_events import error_cls
from chaos.events import ErrorEvent
from chaos.workload.grammar import (
    ExceptionLine,
    ExitLine,
    StatusLine,
    ends_message,
    exception_line,
    exit_line,
    line_time,
    status_line,
    unwrap,
)
from chaos.workload.logparse import LineParser

FRAMES = [
    "Traceback (most recent call last):",
    '  File "/app/train.py", line 88, in <module>',
    "    model.fit(dataset, epochs=5)",
]


def run_errors(lines: list[str]) -> list[tuple[str, str]]:
    """(class, message) of the error events a job run reads from these lines."""
    parser = LineParser("worker-0")
    events = [e for i, line in enumerate(lines) for e in parser.feed(line, t=float(i))] + parser.close()
    return [(e.error_class, e.message) for e in events if isinstance(e, ErrorEvent)]


def diagnosed_errors(lines: list[str]) -> list[tuple[str, str]]:
    """(class, message) of the errors chaos diagnose reads from these lines."""
    log = WorkerLog("worker-0", "worker-0.log", tuple(lines), tuple(range(1, len(lines) + 1)))
    return [(error_cls(e), e.message) for e in observe(log).errors]


# TF 1.x: the session's re-raise (field corpus, tf-17464); the old job-run grammar had no "(see above ...)".
SEE_ABOVE = (
    "NotFoundError (see above for traceback): checkpoint/model.ckpt-1_temp_5d8d532077d241a38f2d79ac2ffeb9a7; "
    "No such file or directory"
)


def test_tf1s_see_above_for_traceback_line_is_an_exception_to_both():
    assert exception_line(SEE_ABOVE) == ExceptionLine(
        "NotFoundError",
        "checkpoint/model.ckpt-1_temp_5d8d532077d241a38f2d79ac2ffeb9a7; No such file or directory",
        "NotFoundError",
    )
    (run,) = run_errors([*FRAMES, SEE_ABOVE])
    (seen,) = diagnosed_errors([*FRAMES, SEE_ABOVE])
    assert run == seen == ("NotFoundError", exception_line(SEE_ABOVE).message)


# mpirun --tag-output (field corpus, horovod-1152): the old job-run grammar read no prefixed traceback.
TAGGED = [
    "[1,1]<stderr>:Traceback (most recent call last):",
    '[1,1]<stderr>:  File "/usr/local/lib/python3.5/dist-packages/tensorflow/python/client/session.py", line 1334',
    "[1,1]<stderr>:    return fn(*args)",
    "[1,1]<stderr>:tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
    "shape[2,1023,50257] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
    "[1,1]<stderr>:Hint: If you want to see a list of allocated tensors when OOM happens, add "
    "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
]


def test_a_launchers_tagged_traceback_is_read_by_both():
    assert unwrap(TAGGED[0]) == "Traceback (most recent call last):"
    (run,) = run_errors(TAGGED)
    (seen,) = diagnosed_errors(TAGGED)
    assert run[0] == "tensorflow.python.framework.errors_impl.ResourceExhaustedError"  # the class as printed
    assert seen[0] == "ResourceExhaustedError"  # diagnose keeps its own name
    assert run[1] == seen[1] and run[1].startswith("OOM when allocating tensor with shape[2,1023,50257]")
    assert run[1].endswith(
        "\nHint: If you want to see a list of allocated tensors when OOM happens, add "
        "report_tensor_allocations_upon_oom to RunOptions for current allocation info."
    )  # without the tag


@pytest.mark.parametrize(
    "line, cls",
    [
        ("SystemExit: 2", "SystemExit"),  # argparse's exit at the end of a traceback
        ("KeyboardInterrupt", "KeyboardInterrupt"),  # the job was interrupted (SIGINT)
        ("mylib.CheckpointFailure: a message", "CheckpointFailure"),  # a library's own class
    ],
)
def test_exit_interrupt_and_failure_classes_end_a_traceback_for_both(line, cls):
    """The old diagnose grammar read only ...Error and ...Exception classes."""
    assert exception_line(line).cls == cls
    assert [c.rsplit(".", 1)[-1] for c, _ in run_errors([*FRAMES, line])] == [cls]
    assert [c for c, _ in diagnosed_errors([*FRAMES, line])] == [cls]


def test_the_class_is_read_short_and_as_printed():
    found = exception_line("tensorflow.python.framework.errors_impl.UnavailableError: Socket closed")
    assert found == ("UnavailableError", "Socket closed", "tensorflow.python.framework.errors_impl.UnavailableError")
    # behind a log prefix, and as some TF code reports one inside a longer line
    assert exception_line("E1125 04:41:42.123456  123 x.cc:45] ValueError: bad").cls == "ValueError"
    assert exception_line("Start cancelling closures due to error UnavailableError(): Socket closed") == (
        "UnavailableError",
        "Socket closed",
        "UnavailableError",
    )
    assert exception_line("Epoch 1/5 loss: 0.93") is None


def test_an_exit_line_ends_an_exception_message_for_both():
    """The old job-run grammar kept kubectl's exit line in the message; diagnose ended it there."""
    lines = [
        *FRAMES,
        "RuntimeError: Collective ops is aborted by:",
        "peer went away",
        "command terminated with exit code 137",
    ]
    assert ends_message(lines[-1]) and not ends_message(lines[-2])
    assert run_errors(lines) == [("RuntimeError", "Collective ops is aborted by:\npeer went away")]
    assert diagnosed_errors(lines) == [("RuntimeError", "Collective ops is aborted by:\npeer went away")]


def test_where_each_reader_looks_is_its_own():
    """A job may print an exception-shaped line as text while it trains: the run
    reads one only at the end of a traceback; diagnose (a pasted log has often
    lost its traceback) reads it anywhere."""
    line = "ValueError: this is just a log line"
    assert run_errors([line]) == []
    assert diagnosed_errors([line]) == [("ValueError", "this is just a log line")]


def test_status_exit_and_time_lines():
    assert status_line("E1125 04:41:42.1 12 x.cc:45] UNAVAILABLE: Socket closed") == StatusLine(
        "UnavailableError", "Socket closed"
    )
    assert status_line('{"grpc_message":"Deadline Exceeded","grpc_status":4}') == (
        "DeadlineExceededError",
        "Deadline Exceeded",
    )
    assert status_line("training step 3 done") is None
    assert exit_line("command terminated with exit code 137") == ExitLine(137, False, "")
    assert exit_line("Reason: OOMKilled") == ExitLine(None, True, "")
    assert exit_line("pod was Evicted") == ExitLine(None, False, "evicted")
    assert line_time("2026-11-25T09:18:55.5Z worker says") == 1795598335.5
    assert line_time("I0000 00:00:1795598333.208476 12 x.cc:1] hello") == 1795598333.208476
    assert line_time("no stamp") is None
