"""The agent writes step events several to one write, and at once where the runner acts on them."""

from __future__ import annotations

import io
import time

from chaos.agent import batching
from chaos.agent.runtime import AgentEmitter
from chaos.events import CheckpointEvent, LogLine, StepEvent, parse_line


class Writes(io.StringIO):
    """A stream that records each flush as one write (as LineStart's one os.write)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[list] = []
        self._mark = 0

    def flush(self) -> None:
        text = self.getvalue()[self._mark :]
        self._mark = len(self.getvalue())
        events = [parse_line(line, "worker-0", 0.0) for line in text.splitlines() if line]
        self.writes.append([(e.kind, getattr(e, "step", None)) for e in events if not isinstance(e, LogLine)])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class NoWriterThread(batching.StepBatching):
    """Batching driven by a test's clock: the agent's own writer thread would wait real seconds
    for a window counted on that clock, and on a busy machine write the held steps between two
    of the test's lines. Here only what is due writes; the thread has tests of its own (real clock)."""

    def _start(self) -> None:
        pass


def emitter(steps=(), window_s=0.05):
    stream, clock = Writes(), Clock()

    def make(write, lock):
        return NoWriterThread(write, lock, steps=steps, window_s=window_s, clock=clock)

    return AgentEmitter(source="worker-0", stream=stream, batching=make), stream, clock


def step(em, n, epoch=0):
    em.emit(StepEvent, epoch=epoch, step=n, loss=0.5, local_loss=0.5)


def test_steps_within_the_window_go_out_in_one_write_when_it_ends():
    em, stream, clock = emitter()
    step(em, 1)  # the first goes at once
    for n in range(2, 6):
        clock.now += 0.01
        step(em, n)
    assert stream.writes == [[("step", 1)]]
    clock.now += 0.011  # 51 ms after the first write
    step(em, 6)
    assert stream.writes == [[("step", 1)], [("step", n) for n in range(2, 7)]]


def test_a_watched_step_goes_out_at_once_with_the_ones_held():
    em, stream, clock = emitter(steps=(4,))
    for n in range(1, 6):
        clock.now += 0.001
        step(em, n)
    assert stream.writes == [[("step", 1)], [("step", 2), ("step", 3), ("step", 4)]]


def test_the_first_step_past_a_watched_step_goes_out_at_once():
    """A restored count can jump past the step a trigger names: the first step beyond it is due."""
    em, stream, clock = emitter(steps=(10,))
    step(em, 1)
    clock.now += 0.001
    step(em, 12)
    assert stream.writes[-1] == [("step", 12)]


def test_a_new_epoch_and_a_step_counted_again_go_out_at_once():
    em, stream, clock = emitter()
    step(em, 7)
    clock.now += 0.001
    step(em, 8, epoch=1)  # an epoch trigger's step
    clock.now += 0.001
    step(em, 3, epoch=1)  # a restore: counting again from 3
    assert stream.writes == [[("step", 7)], [("step", 8)], [("step", 3)]]


def test_every_other_event_goes_out_at_once_after_the_held_steps():
    em, stream, clock = emitter()
    step(em, 1)
    clock.now += 0.001
    step(em, 2)
    em.emit(CheckpointEvent, epoch=0, step=2, path="ckpt-1")
    assert stream.writes == [[("step", 1)], [("step", 2), ("checkpoint", 2)]]


def test_without_a_watch_the_same_steps_are_held():
    """The control for the watched-step test: the same steps, no watch, the fourth is held."""
    em, stream, clock = emitter(steps=())
    for n in range(1, 6):
        clock.now += 0.001
        step(em, n)
    assert stream.writes == [[("step", 1)]]


def test_held_steps_are_written_by_the_agents_thread_when_the_window_ends():
    stream = Writes()
    em = AgentEmitter(
        source="worker-0",
        stream=stream,
        batching=lambda write, lock: batching.StepBatching(write, lock, steps=(), window_s=0.05),
    )
    step(em, 1)
    step(em, 2)
    step(em, 3)
    assert stream.writes == [[("step", 1)]]
    deadline = time.monotonic() + 5
    while len(stream.writes) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.writes == [[("step", 1)], [("step", 2), ("step", 3)]]


def test_close_writes_what_is_held():
    em, stream, clock = emitter()
    step(em, 1)
    step(em, 2)
    em.close()
    assert stream.writes[-1] == [("step", 2)]


def test_the_watch_is_read_from_the_environment_and_bad_text_is_no_watch():
    assert batching.watched_steps({batching.WATCH_ENV: "130,100"}) == (100, 130)
    assert batching.watched_steps({batching.WATCH_ENV: "100,x"}) == ()
    assert batching.watched_steps({}) == ()
    assert batching.watch_text([130, 100, 100]) == "100,130"


def test_a_custom_loops_step_event_is_printed_from_its_template_and_read_back_whole():
    """The loop observer's step events (every field of STEP_FIELDS) skip building an event;
    what the runner reads is the event it would have been, batched the same."""
    from chaos.agent.runtime import STEP_FIELDS

    em, stream, _ = emitter()
    for n in (1, 2):
        em.emit(StepEvent, epoch=0, step=n, loss=0.25, local_loss=0.25, loss_reported=True)
    assert stream.writes == [[("step", 1)]]
    em.emit(StepEvent, epoch=1, step=3, loss=float("nan"), local_loss=float("nan"), loss_reported=False)
    assert stream.writes[-1] == [("step", 2), ("step", 3)]
    lines = [line for line in stream.getvalue().splitlines() if line]
    third = parse_line(lines[-1], "worker-0", 0.0)
    assert set(STEP_FIELDS) - {"t"} == {"epoch", "step", "loss", "local_loss", "loss_reported"}
    assert (third.step, third.loss_reported, third.source, third.weights_finite) == (3, False, "worker-0", None)
    assert abs(third.t - time.time()) < 60


def test_a_step_is_held_while_another_thread_writes_and_the_writes_keep_their_order():
    """A write lets the emitter's lock go while it writes: the train step's next event does not wait
    for the agent's thread's write to a slow stdout, and the next write comes after it."""
    import threading

    class SlowWrites(Writes):
        def __init__(self) -> None:
            super().__init__()
            self.entered, self.go = threading.Event(), threading.Event()

        def flush(self) -> None:
            if len(self.writes) == 1:  # the second write: the first held steps, from another thread
                self.entered.set()
                assert self.go.wait(5)
            super().flush()

    stream, clock = SlowWrites(), Clock()
    em = AgentEmitter(
        source="worker-0",
        stream=stream,
        batching=lambda write, lock: batching.StepBatching(write, lock, steps=(), window_s=3600, clock=clock),
    )
    step(em, 1)
    step(em, 2)  # held
    writer = threading.Thread(target=em.close)
    writer.start()
    assert stream.entered.wait(5)
    done = threading.Event()
    threading.Thread(target=lambda: (step(em, 3), done.set())).start()
    assert done.wait(5), "a held step waited for another thread's write"
    stream.go.set()
    writer.join(5)
    em.close()
    assert stream.writes == [[("step", 1)], [("step", 2)], [("step", 3)]]
