"""Events from plain log lines: progress by the scenario's pattern, TF errors
from the traceback a failing job prints on stderr."""

from __future__ import annotations

import math

from chaos.events import DoneEvent, ErrorEvent, LogLine, StepEvent
from chaos.workload.logparse import LineParser
from chaos.workload.spec import ProgressPattern

TF_FAILURE = """\
Traceback (most recent call last):
  File "/app/train.py", line 88, in <module>
    model.fit(dataset, epochs=5, callbacks=callbacks)
  File "/opt/venv/lib/python3.11/site-packages/tf_keras/src/utils/traceback_utils.py", line 70, in error_handler
    raise e.with_traceback(filtered_tb) from None
tensorflow.python.framework.errors_impl.UnavailableError: Graph execution error:

Detected at node CollectiveReduceV2 defined at (most recent call last):
Collective ops is aborted by: failed to connect to all addresses; last error: UNKNOWN: ipv4:172.18.0.3:23601: Failed to connect to remote host: Connection refused
Additional GRPC error information from remote target /job:worker/replica:0/task:1 while calling /tensorflow.CollectiveService/CompleteGroup:
:{"created":"@1700000000.1","description":"Error received from peer"} [Op:__inference_train_function_1234]
""".splitlines()


def feed_all(parser, lines):
    out = []
    for i, line in enumerate(lines):
        out += parser.feed(line, t=100.0 + i)
    return out + parser.close()


def test_a_tf_error_on_stderr_becomes_an_error_event_with_its_whole_message():
    events = feed_all(LineParser("worker-0"), TF_FAILURE)
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.error_class == "tensorflow.python.framework.errors_impl.UnavailableError"
    assert error.message.startswith("Graph execution error:")
    assert "Collective ops is aborted by: failed to connect to all addresses" in error.message
    assert error.t == 105.0 and error.source == "worker-0"
    assert sum(isinstance(e, LogLine) for e in events) == len(TF_FAILURE)  # the lines stay in the log


def test_the_message_ends_where_the_next_record_starts():
    lines = TF_FAILURE[:6] + ["I0000 00:00:1700000001.2 12 grpc_server_lib.cc:467] Started server", "after"]
    events = feed_all(LineParser("worker-1"), lines)
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.message == "Graph execution error:"


def test_an_exception_line_outside_a_traceback_is_not_an_error():
    events = feed_all(LineParser("worker-0"), ["ValueError: this is just a log line"])
    assert not [e for e in events if isinstance(e, ErrorEvent)]


def test_errors_are_not_parsed_when_the_workload_reports_them_itself():
    events = feed_all(LineParser("worker-0", parse_errors=False), TF_FAILURE)
    assert not [e for e in events if isinstance(e, ErrorEvent)]


def test_progress_lines_become_steps_and_the_done_line_a_done_event():
    progress = ProgressPattern(
        step=r"step (?P<step>\d+)/\d+ epoch (?P<epoch>\d+) loss (?P<loss>[0-9.]+)", done=r"^training finished"
    )
    lines = ["step 1/40 epoch 0 loss 0.93", "noise", "step 2/40 epoch 0 loss nan-ish", "training finished"]
    events = feed_all(LineParser("worker-1", progress), lines)
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert [(s.step, s.epoch, s.loss) for s in steps[:1]] == [(1, 0, 0.93)]
    assert len(steps) == 1  # "nan-ish" does not match [0-9.]+
    assert [e.source for e in events if isinstance(e, DoneEvent)] == ["worker-1"]


def test_a_step_without_a_loss_group_has_a_nan_loss():
    events = feed_all(LineParser("worker-0", ProgressPattern(step=r"it=(?P<step>\d+)")), ["it=7"])
    (step,) = [e for e in events if isinstance(e, StepEvent)]
    assert step.step == 7 and math.isnan(step.loss)


def test_json_event_lines_pass_through():
    line = '{"event":"step","t":5.0,"source":"worker-0","step":3,"epoch":0,"loss":0.5}'
    (event,) = LineParser("worker-0").feed(line)
    assert isinstance(event, StepEvent) and event.step == 3


def test_blank_lines_outside_an_error_are_dropped():
    events = feed_all(LineParser("worker-0"), ["", "  ", "step 1"])
    assert [e.text for e in events if isinstance(e, LogLine)] == ["step 1"]


def test_blank_lines_inside_an_error_message_are_kept_in_the_message():
    events = feed_all(LineParser("worker-0"), TF_FAILURE)
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert "Graph execution error:\n\nDetected at node" in error.message
