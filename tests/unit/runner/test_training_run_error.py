"""A fault-free training run (the baseline, the uninterrupted reference) whose job fails
says so in one line: the job's own error, not a tensor it printed."""

from __future__ import annotations

import contextlib
import types

import pytest

from chaos.errors import InfrastructureError
from chaos.events import ErrorEvent, ExitEvent
from chaos.runner.training import run_training

PER_REPLICA = (
    "Attempt to convert a value (PerReplica:{\n  0: <tf.Tensor: shape=(32, 20), dtype=float32, numpy=\n"
    "array([[-1.8486236e-01, -6.8092954e-01, " + "1.0, " * 400 + "]])>\n}) with an unsupported type"
)


class FailingBackend:
    @contextlib.contextmanager
    def cluster(self, spec, events):
        def start_workers():
            for w in (0, 1):
                events.append(
                    ErrorEvent(t=1.0 + w, source=f"worker-{w}", error_class="builtins.ValueError", message=PER_REPLICA)
                )
                events.append(ExitEvent(t=2.0 + w, source=f"worker-{w}", exit_code=1))

        yield types.SimpleNamespace(start_workers=start_workers)


def test_the_jobs_error_in_one_line_and_a_hint_for_a_users_job():
    with pytest.raises(InfrastructureError) as err:
        run_training(types.SimpleNamespace(num_slots=2), FailingBackend(), timeout_s=5)
    message = err.value.message
    assert "the workload itself fails, not from a fault" in message
    assert "worker-0: ValueError: Attempt to convert a value (PerReplica:{ ..." in message
    assert "array(" not in message and len(message) < 800, message
    assert "run the job's image by hand" in err.value.hint
