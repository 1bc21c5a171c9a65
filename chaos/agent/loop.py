"""A custom training loop, observed from the TF objects it already uses.

A loop that never calls tfchaos still creates an optimizer, calls a
``tf.function`` (or runs eagerly), and saves and restores ``tf.train.Checkpoint``s.
The patches in chaos.agent.tf_patches tell this observer about each; it reports
the event contract from them:

* **step**: one per update of the weights. A train step is a ``tf.function``
  call that traced an optimizer's apply (or an eager apply); after each such
  call the observer reads the optimizers' ``iterations`` and counts how far
  they went (several optimizers in one step count once; a call that applied
  nothing, as in gradient accumulation, counts none). Where the function's
  traces show one apply per call (chaos.agent.step_shape) it counts calls
  instead, and reads every VERIFY_EVERY-th step to check. The step number is the
  job's global step as the agent counts it: the restored checkpoint's step
  plus the updates since. The loss is what the call returned when that is a
  scalar (the tutorials return the all-reduced loss), else not reported.
* **checkpoint**: each ``Checkpoint`` save or write, also through a
  ``CheckpointManager``: its name and the step it holds (recorded beside it,
  chaos.agent.checkpoint_steps), the job's own step counter, and its integer
  counters (chaos.agent.variables.counters), read with no collective.
* **restored**: each restore or read of a saved checkpoint: its name, its
  step (the recorded one; else a checkpointed optimizer's ``iterations``; else
  the manager's ``step_counter``), the digest of what it restored and the
  job's counters as restored. A loop
  that trains with nothing restored gets a notice that it started fresh.
* **done**: at the interpreter's normal exit, after steps and with no error
  and no non-zero ``sys.exit``: the digest of the variables the job's newest
  ``Checkpoint`` holds (chaos.agent.variables), else of the optimizer's.

It stays quiet inside Keras ``fit`` (chaos.agent.fit reports that) and once the
job makes a report call of its own: the job's calls win.
"""

from __future__ import annotations

import math
import os
import sys
import threading

from chaos.agent import checkpoint_steps, step_shape, variables
from chaos.agent.runtime import emitter, enabled, guarded, quiet

_lock = threading.RLock()
# Where a train step's traces show one apply per call (chaos.agent.step_shape), steps are
# counted, and iterations read every VERIFY_EVERY-th step to check the count.
VERIFY_EVERY = 50
JOB_STEP_NAMES = ("global_step", "step", "steps", "step_counter", "train_step", "iteration")


def loss_of(result) -> float | None:
    """The loss a train step returned: a scalar, a dict's ``loss``, a tuple's first."""
    value = result
    if isinstance(result, dict):
        value = result.get("loss")
    elif isinstance(result, (tuple, list)):
        value = result[0] if result else None
    if value is None:
        return None
    try:
        # An EagerTensor's _shape_tuple is its shape without building a TensorShape (a few us a step).
        shape = value._shape_tuple() if hasattr(value, "_shape_tuple") else tuple(getattr(value, "shape", ()))
        if shape not in ((), (1,)):
            return None
        value = value.numpy() if hasattr(value, "numpy") else value
        return float(value.reshape(()) if shape == (1,) and hasattr(value, "reshape") else value)
    except (TypeError, ValueError, AttributeError):
        return None


class LoopObserver:
    def __init__(self, emit=None) -> None:
        self._emit = emit
        self.step = 0  # the job's global step as the agent counts it
        self.steps_seen = 0  # updates seen in this process
        self.epoch_var = None
        # Whether to look for an epoch variable again: once per new checkpoint, save or restore (a
        # job may set it on its checkpoint later), not per step (a walk of its children: 24 us).
        self._epoch_search_due = False
        # The epoch variable's value as last read, None: read it at the next step. A read is an eager
        # op (about 90 us a step in a 2-worker MWMS, docs/notebook/agent.md), so it is read again only
        # after an eager assign to it (tf_patches.patch_variable_module tells), a checkpoint's save
        # or restore, and every VERIFY_EVERY-th step to check; every step once it is assigned inside
        # a tf.function or a check disagreed.
        self._epoch_value: int | None = None
        self._epoch_unread = 0
        self._epoch_every_step = False
        self.assign_watch: set[int] = set()  # ids of the epoch variable and the tf.Variables it holds
        self._last_iterations: dict[int, int] = {}  # id(optimizer) -> its iterations, read or counted
        self._unread = 0  # steps counted since the last read (chaos.agent.step_shape)
        self._distrust = False  # a read disagreed with a count: read every step
        self._optimizers: dict[int, object] = {}
        # Held, not weakly: the job's main() has returned when done is reported at exit.
        self._checkpoints: list = []  # oldest first
        self._managers: list = []
        self.restored = False
        self._fresh_said = False
        self._exit_hooked = False
        self.exit_code = None  # a sys.exit code the job gave
        self._enabled: bool | None = None  # CHAOS_AGENT=1, read at the first event

    # -- what the patches tell ------------------------------------------------

    def active(self) -> bool:
        if self._enabled is None:  # the environment is read once: a step's lookup cost 5-10 us
            self._enabled = enabled()
        return self._enabled and not quiet()

    def optimizer_applied(self, optimizer) -> None:
        with _lock:
            self._optimizers.setdefault(id(optimizer), optimizer)

    def checkpoint_created(self, checkpoint) -> None:
        if quiet():  # BackupAndRestore's own, inside fit
            return
        with _lock:
            self._checkpoints.append(checkpoint)
            del self._checkpoints[:-16]
            self._epoch_search_due = True
            self._epoch_value = None

    def manager_created(self, manager) -> None:
        if quiet():
            return
        with _lock:
            self._managers.append(manager)
            del self._managers[:-16]

    @guarded("custom loop: counting a step")
    def trained(self, optimizers, result=None, fn=None) -> None:
        """A train step ran (``fn``, a tf.function call that applies ``optimizers``, or an eager apply)."""
        if not self.active():
            return
        with _lock:
            fixed = step_shape.fixed_advance(fn, optimizers) if fn is not None and not self._distrust else None
            if fixed and self._unread < VERIFY_EVERY and all(id(o) in self._last_iterations for o in optimizers):
                for optimizer in optimizers:  # what a read would give, as the traces say
                    self._last_iterations[id(optimizer)] += fixed
                self._unread += 1
                advanced = fixed
            else:
                advanced = self._read_advance(optimizers)
                self._unread = 0
                if fixed and advanced != fixed:
                    self._distrust_counting(fixed, advanced)
            if advanced <= 0:
                return
            self._first_step()
            self.step += advanced
            self.steps_seen += advanced
            loss = loss_of(result)
            from chaos.events import StepEvent

            self._send(
                StepEvent,
                epoch=self.epoch(),
                step=self.step,
                loss=math.nan if loss is None else loss,
                local_loss=math.nan if loss is None else loss,
                loss_reported=loss is not None,
            )

    def _read_advance(self, optimizers) -> int:
        """How far the optimizers' ``iterations`` went since the last read (several count once)."""
        advanced = 0
        for optimizer in optimizers:
            value = variables.integer_value(optimizer.iterations)
            if value is None:
                continue
            before = self._last_iterations.get(id(optimizer))
            self._last_iterations[id(optimizer)] = value
            advanced = max(advanced, min(value, 1) if before is None else value - before)
        return advanced

    def _distrust_counting(self, fixed: int, read: int) -> None:
        """A read disagreed with the count the traces gave: read every call from now on."""
        self._distrust = True
        from chaos.events import NoticeEvent

        self._send(
            NoticeEvent,
            topic="agent",
            text=f"a train step's traces said each call applies its optimizer {fixed} time(s), but its "
            f"iterations moved {read} in the last call: steps are counted by reading iterations from now on",
        )

    @guarded("custom loop: the checkpoint event")
    def saved(self, checkpoint, path) -> None:
        if not self.active() or not path:
            return
        path = os.fspath(path)
        with _lock:
            self._epoch_search_due = True
            self._epoch_value = None
            try:
                checkpoint_steps.record(path, self.step)
            except OSError:
                pass  # a folder the job can write but we cannot name: the step is read back another way
            from chaos.events import CheckpointEvent

            self._send(
                CheckpointEvent,
                epoch=self.epoch(),
                step=self.step,
                path=os.path.basename(path),
                job_step=self.job_step(checkpoint),
                **self.counters(checkpoint),
            )

    @guarded("custom loop: the restored event")
    def restored_from(self, checkpoint, path) -> None:
        if not self.active() or not path:
            return
        path = os.fspath(path)
        with _lock:
            self._epoch_search_due = True
            self._epoch_value = None  # a restore writes the variable without an assign
            step = self._restored_step(checkpoint, path)
            self.step = step or 0
            self.restored = True
            self._last_iterations.clear()  # a restored optimizer's iterations jumped: not a step
            from chaos.events import NoticeEvent, RestoredEvent

            if step is None:
                self._send(
                    NoticeEvent,
                    topic="agent",
                    text=f"restored {os.path.basename(path)}, but the step it holds is unknown: it was not "
                    "saved under the agent and holds no optimizer or step counter; steps count from 0",
                )
            self._send(
                RestoredEvent,
                epoch=self.epoch(),
                step=self.step,
                checkpoint=os.path.basename(path),
                weights_digest=variables.digest(checkpoint),
                **self.counters(checkpoint),
            )

    # -- the state behind the events -----------------------------------------

    def _restored_step(self, checkpoint, path: str) -> int | None:
        """The step ``checkpoint`` holds: recorded at its save, else its optimizer's iterations,
        else its manager's step counter; None when none of them says."""
        recorded = checkpoint_steps.lookup(path)
        if recorded is not None:
            return recorded
        counts = [variables.integer_value(o.iterations) for o in variables.optimizers_in(checkpoint)]
        counts = [c for c in counts if c is not None]
        if counts:
            return max(counts)
        return self._manager_counter(checkpoint)

    def _manager_counter(self, checkpoint) -> int | None:
        """The step_counter of the newest CheckpointManager of ``checkpoint`` (of any, for None)."""
        for manager in reversed(self._managers):
            counter = getattr(manager, "_step_counter", None)
            if counter is not None and (checkpoint is None or getattr(manager, "checkpoint", None) is checkpoint):
                value = variables.integer_value(counter)
                if value is not None:
                    return value
        return None

    def job_step(self, checkpoint) -> int:
        """The job's own step counter: its CheckpointManager's step_counter, else an integer variable its
        checkpoint holds under a step's name; -1 when it keeps none."""
        counted = self._manager_counter(checkpoint)
        if counted is not None:
            return counted
        for name in JOB_STEP_NAMES:
            candidate = variables.child_named(checkpoint, name) if checkpoint is not None else None
            value = variables.integer_value(candidate) if candidate is not None else None
            if value is not None:
                return value
        return -1

    @staticmethod
    def counters(checkpoint) -> dict[str, dict[str, int]]:
        """The event fields of the job's integer counters (chaos.agent.variables.counters)."""
        try:
            readings, parts = variables.counters(checkpoint)
        except Exception:  # noqa: BLE001 - an odd object graph costs the event its counters only
            return {}
        return {"job_counters": readings, "job_counter_parts": parts}

    def epoch(self) -> int:
        """The job's own epoch where its checkpoint holds an integer ``epoch`` variable, else 0."""
        if self.epoch_var is None:
            if not self._epoch_search_due:
                return 0
            self._epoch_search_due = False
            for checkpoint in reversed(self._checkpoints):
                candidate = variables.child_named(checkpoint, "epoch")
                found = variables.integer_value(candidate) if candidate is not None else None
                if found is not None:
                    self.epoch_var, self._epoch_value, self._epoch_unread = candidate, found, 0
                    self.assign_watch = variables.identities(candidate)
                    return found
            return 0
        checking = self._epoch_unread >= VERIFY_EVERY
        if self._epoch_value is not None and not checking and not self._epoch_every_step:
            self._epoch_unread += 1
            return self._epoch_value
        value = variables.integer_value(self.epoch_var) or 0
        if checking and value != self._epoch_value and not self._epoch_every_step:
            self._epoch_every_step = True
            self._say_epoch_read_every_step(
                f"it read {value} where no assign since had moved it from {self._epoch_value}"
            )
        self._epoch_value, self._epoch_unread = value, 0
        return value

    def epoch_assigned(self, eagerly: bool) -> None:
        """The epoch variable was assigned: eagerly (read it at the next step), or in a tf.function
        being traced (it changes on the function's calls: read it every step)."""
        self._epoch_value = None
        if not eagerly and not self._epoch_every_step:
            self._epoch_every_step = True
            self._say_epoch_read_every_step("it is assigned inside a tf.function")

    def _say_epoch_read_every_step(self, why: str) -> None:
        from chaos.events import NoticeEvent

        self._send(
            NoticeEvent, topic="agent", text=f"the job's epoch variable is read at every step from now on: {why}"
        )

    def newest_checkpoint(self):
        return self._checkpoints[-1] if self._checkpoints else None

    def final_digest(self) -> str:
        """What the job's newest Checkpoint holds; "" for a loop that makes none (nothing to recover)."""
        checkpoint = self.newest_checkpoint()
        return variables.digest(checkpoint) if checkpoint is not None else ""

    def _first_step(self) -> None:
        if not self._exit_hooked:
            self._exit_hooked = True
            _hook_exit(self)
        if not self.restored and not self._fresh_said:
            self._fresh_said = True
            from chaos.events import NoticeEvent

            self._send(
                NoticeEvent, topic="agent", text="started fresh: no checkpoint was restored before the first step"
            )

    @guarded("custom loop: the done event")
    def finished(self) -> None:
        from chaos.agent import errors

        if not self.active() or not self.steps_seen or errors.reported() or self.exit_code not in (None, 0):
            return
        from chaos.events import DoneEvent

        self._send(
            DoneEvent,
            epoch=self.epoch(),
            step=self.step,
            weights_digest=self.final_digest(),
            job_step=self.job_step(self.newest_checkpoint()),
        )

    def _send(self, cls, **fields) -> None:
        from chaos.agent import start

        start.ensure_started()
        (self._emit or emitter()).emit(cls, **fields)


def _hook_exit(obs: LoopObserver) -> None:
    """done at a normal exit: atexit, registered after TF's own (so it runs before them),
    and sys.exit wrapped to learn a non-zero code (atexit cannot see it)."""
    import atexit

    atexit.register(obs.finished)
    original = sys.exit

    def exit(code=None):  # noqa: A001 - sys.exit's own name
        obs.exit_code = code
        original(code)

    exit._tfchaos_original = original
    sys.exit = exit


_observer: LoopObserver | None = None


def observer() -> LoopObserver:
    global _observer
    if _observer is None:
        _observer = LoopObserver()
    return _observer
