"""Hand-built timelines for the check tests (a plain module: tests import it)."""

from __future__ import annotations

from chaos.events import (
    RUNNER,
    CheckpointEvent,
    DoneEvent,
    ErrorEvent,
    ExitEvent,
    HealEvent,
    InjectEvent,
    LogLine,
    RestartEvent,
    RestoredEvent,
    StartEvent,
    StepEvent,
)
from chaos.timeline import RunInfo, Timeline


class TimelineBuilder:
    """Appends events on a clock that only moves forward."""

    def __init__(
        self, workers=2, steps_per_epoch=10, epochs=3, save_interval=10, reference_digest=None, reference_loss=None
    ):
        self.info = RunInfo(
            num_workers=workers,
            steps_per_epoch=steps_per_epoch,
            epochs=epochs,
            save_interval_steps=save_interval,
            reference_digest=reference_digest,
            reference_final_loss=reference_loss,
        )
        self.events = []
        self.t = 100.0

    def wait(self, seconds):
        self.t += seconds
        return self

    def _add(self, event):
        self.events.append(event)
        return self

    def start(self, workers=None):
        for w in workers if workers is not None else range(self.info.num_workers):
            self._add(StartEvent(t=self.t, source=f"worker-{w}", tf_version="2.20"))
        return self

    def steps(self, first, last, dt=0.1, workers=None, loss=0.5):
        for step in range(first, last + 1):
            self.t += dt
            for w in workers if workers is not None else range(self.info.num_workers):
                epoch = (step - 1) // self.info.steps_per_epoch
                self._add(StepEvent(t=self.t, source=f"worker-{w}", epoch=epoch, step=step, loss=loss))
        return self

    def log(self, worker, *texts):
        for text in texts:
            self._add(LogLine(t=self.t, source=f"worker-{worker}", text=text))
        return self

    def inject(self, fault="kill_worker", target="worker-1", **params):
        return self._add(InjectEvent(t=self.t, source=RUNNER, fault=fault, target=target, params=params))

    def heal(self, fault="kill_worker", target="worker-1"):
        return self._add(HealEvent(t=self.t, source=RUNNER, fault=fault, target=target))

    def error(self, worker, error_class, message):
        return self._add(ErrorEvent(t=self.t, source=f"worker-{worker}", error_class=error_class, message=message))

    def exit(self, worker, code, oom=False):
        return self._add(ExitEvent(t=self.t, source=f"worker-{worker}", exit_code=code, oom_killed=oom))

    def restart(self, workers=None):
        for w in workers if workers is not None else range(self.info.num_workers):
            self._add(RestartEvent(t=self.t, source=f"worker-{w}", reason="restart policy: all"))
        return self

    def checkpoint(self, step, workers=None, path="ckpt"):
        """Every worker reports the backup BackupAndRestore just saved at ``step``."""
        for w in workers if workers is not None else range(self.info.num_workers):
            epoch = step // self.info.steps_per_epoch
            self._add(CheckpointEvent(t=self.t, source=f"worker-{w}", epoch=epoch, step=step, path=f"{path}-{step}"))
        return self

    def restored(self, worker, epoch, step, checkpoint="backup/chief", digest="w-restored"):
        return self._add(
            RestoredEvent(
                t=self.t,
                source=f"worker-{worker}",
                epoch=epoch,
                step=step,
                checkpoint=checkpoint,
                weights_digest=digest,
            )
        )

    def done(self, worker, step=None, digest="w-final"):
        step = self.info.final_step if step is None else step
        return self._add(
            DoneEvent(t=self.t, source=f"worker-{worker}", epoch=self.info.epochs - 1, step=step, weights_digest=digest)
        )

    def build(self):
        return Timeline(self.info, list(self.events))


UNAVAILABLE = "tensorflow.python.framework.errors_impl.UnavailableError"


def killed_and_recovered(
    builder=None,
    *,
    restored_steps=(10, 10),
    final_digests=("w-final", "w-final"),
    restored_digests=("w-restored", "w-restored"),
):
    """Backup at step 10; kill worker-1 at step 15, the chief fails, both restart from step 10 and finish."""
    b = builder or TimelineBuilder()
    b.start().steps(1, 10).checkpoint(10).steps(11, 15)
    b.inject("kill_worker", "worker-1", worker=1, signal="SIGKILL")
    b.wait(0.2).exit(1, 137).wait(0.8).error(
        0, UNAVAILABLE, "Collective ops is aborted by: failed to connect; Connection refused"
    )
    b.exit(0, 1).wait(1).restart().wait(5).start()
    for w, (step, digest) in enumerate(zip(restored_steps, restored_digests)):
        b.restored(w, epoch=step // b.info.steps_per_epoch, step=step, digest=digest)
    b.wait(0.5).steps(min(restored_steps) + 1, b.info.final_step)
    for w, digest in enumerate(final_digests):
        b.done(w, digest=digest)
    return b.build()
