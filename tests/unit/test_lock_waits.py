"""A run waiting for a file lock another process holds (an image build, a
reference run, a venv fill) stops waiting when the run is stopped: Ctrl-C
must never wait for someone else's build."""

from __future__ import annotations

import fcntl
import threading
import time

from chaos import interrupts


def test_a_stopped_runs_lock_wait_ends_with_cancelled(tmp_path):
    path = tmp_path / "images.lock"
    holder = open(path, "w")
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's build
    stop = threading.Event()
    outcome: list[object] = []

    def waiter():
        with interrupts.stop_token(stop.is_set):
            try:
                with interrupts.file_lock(str(path)):
                    outcome.append("got the lock")
            except interrupts.Cancelled:
                outcome.append("cancelled")

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    assert outcome == []  # still waiting while the build runs
    stop.set()
    thread.join(2)
    assert outcome == ["cancelled"] and not thread.is_alive()
    holder.close()


def test_the_lock_is_exclusive_and_taken_once_free(tmp_path):
    path = str(tmp_path / "x.lock")
    order = []

    def first():
        with interrupts.file_lock(path):
            order.append("first in")
            time.sleep(0.3)
            order.append("first out")

    t = threading.Thread(target=first)
    t.start()
    time.sleep(0.1)
    with interrupts.file_lock(path):
        order.append("second in")
    t.join()
    assert order == ["first in", "first out", "second in"]


def test_without_a_stop_token_a_wait_is_not_cancelled(tmp_path):
    path = str(tmp_path / "y.lock")
    holder = open(path, "w")
    fcntl.flock(holder, fcntl.LOCK_EX)
    threading.Timer(0.3, holder.close).start()  # the other process finishes
    with interrupts.file_lock(path):
        pass  # taken after the holder let go
