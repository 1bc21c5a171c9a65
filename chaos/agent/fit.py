"""Keras ``Model.fit``, reported: the agent's patch and its callback.

When a module that defines a Keras fit is imported (install.TRAINING_MODULES:
tf_keras's and TF 2.15's ``Model``, Keras 3's ``TensorFlowTrainer``, the TF
backend's base of its ``Model``), its ``fit`` is replaced by a wrapper that
appends one callback to the caller's callbacks and calls the original with
everything else unchanged. Where each Keras's BackupAndRestore writes is
chaos.worker.backup_formats (Keras 2: the chief's ``chief/ckpt-N``; Keras 3: each
worker's ``latest.weights.h5``). Keras 3's fit raises before its first step under
MultiWorkerMirroredStrategy with more than one worker (docs/findings.md): then
only its error is reported.
The callback runs after the caller's, so after BackupAndRestore has restored
(train begin) and backed up (epoch or batch end). What it reports:

* ``plan`` at train begin: epochs, steps per epoch, the save interval and
  BackupAndRestore's backup_dir;
* ``restored`` when a backup was there to restore: where fit resumes (as the
  backup format reads it), the backup's name and the weights digest right
  after the restore;
* ``step``, ``epoch_end`` and ``checkpoint``, by chaos.worker.callback's
  ChaosEvents (including its tolerance of the chief deleting the backup while
  a non-chief reads it at the end of fit);
* ``done`` when fit returns, with the weights digest; ``error`` when it raises.

Every agent step is guarded: if it fails, fit runs as if the agent were not there.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types

from chaos.agent.digest import weights_digest
from chaos.agent.errors import report_exception
from chaos.agent.runtime import emitter, enabled, fit_began, fit_ended, guarded
from chaos.events import DoneEvent, EpochEndEvent, NoticeEvent, PlanEvent, RestoredEvent, StepEvent
from chaos.worker.backup_formats import KERAS2, KERAS3, BackupFormat
from chaos.worker.callback import make_callback_class

ORIGINAL = "_tfchaos_original_fit"


KERAS3_TRAINER = ".src.backend.tensorflow.trainer"  # keras.src.backend.tensorflow.trainer


def fit_hook(training_module_name: str) -> tuple[str, str, BackupFormat]:
    """(the class whose fit is patched, its callbacks module, its backups' format)."""
    if training_module_name.endswith(KERAS3_TRAINER):
        return "TensorFlowTrainer", training_module_name.removesuffix(KERAS3_TRAINER) + ".src.callbacks", KERAS3
    return "Model", training_module_name.rsplit(".engine.training", 1)[0] + ".callbacks", KERAS2


def save_interval(save_freq, steps_per_epoch: int | None) -> int:
    """Steps between two backups (0: unknown or none)."""
    if save_freq == "epoch":
        return steps_per_epoch or 0
    if isinstance(save_freq, int) and not isinstance(save_freq, bool) and save_freq > 0:
        return save_freq
    return 0


def find_backup_and_restore(callbacks: list, callbacks_module):
    cls = getattr(callbacks_module, "BackupAndRestore", None)
    for cb in callbacks:
        if cls is not None and isinstance(cb, cls):
            return cb
    return None


class FitRun:
    """What the agent knows of one fit call; the reporter callback feeds it."""

    def __init__(
        self, model, user_callbacks: list, initial_epoch: int, callbacks_module, emit=None, backups=KERAS2
    ) -> None:
        self.model = model
        self.backups = backups
        self.user_callbacks = user_callbacks
        self.initial_epoch = int(initial_epoch or 0)
        self.callbacks_module = callbacks_module
        self.emitter = emit or emitter()
        self.steps: int | None = None
        self.epoch = self.initial_epoch
        self.last_step = 0
        self.began = False
        self.inner = None  # chaos.worker.callback.ChaosEvents, once the steps per epoch are known

    @guarded("fit: train begin")
    def train_begin(self, params: dict | None) -> None:
        params = params or {}
        self.began = True
        self.steps = int(params["steps"]) if params.get("steps") else None
        epochs = int(params.get("epochs") or 0)
        backup = find_backup_and_restore(self.user_callbacks, self.callbacks_module)
        backup_dir = getattr(backup, "backup_dir", None) if backup is not None else None
        save_freq = getattr(backup, "save_freq", "epoch") if backup is not None else "epoch"
        self.epoch = self.initial_epoch
        self.last_step = self.initial_epoch * (self.steps or 0)
        self.emitter.emit(
            PlanEvent,
            epochs=epochs,
            steps_per_epoch=self.steps or 0,
            total_steps=epochs * self.steps if self.steps else 0,
            initial_epoch=self.initial_epoch,
            save_every_steps=save_interval(save_freq, self.steps) if backup_dir else 0,
            checkpoint_dir=str(backup_dir or ""),
        )
        # Each on its own: a backup that cannot be read must not cost the steps.
        if backup_dir:
            self._report_restore(str(backup_dir), save_freq)
        if self.steps:
            self._follow_steps(backup_dir, save_freq)

    @guarded("fit: step reporting")
    def _follow_steps(self, backup_dir, save_freq) -> None:
        ChaosEvents = make_callback_class(types.SimpleNamespace(callbacks=self.callbacks_module))
        self.inner = ChaosEvents(
            self.steps, backup_dir=backup_dir, save_freq=save_freq, emitter=self.emitter, backups=self.backups
        )

    @guarded("fit: the restored event")
    def _report_restore(self, backup_dir: str, save_freq) -> None:
        backup = self.backups.newest(backup_dir)
        if backup is None:
            return
        epoch, in_epoch = self.backups.position(backup, save_freq, self.steps or 0)
        step = epoch * self.steps + in_epoch if self.steps else 0
        self.emitter.emit(
            RestoredEvent,
            epoch=epoch,
            step=step,
            checkpoint=self.backups.name(backup),
            weights_digest=weights_digest(self.model.get_weights()),
        )
        self.epoch, self.last_step = epoch, step

    @guarded("fit: epoch begin")
    def epoch_begin(self, epoch: int, logs=None) -> None:
        epoch = self.epoch = int(epoch)
        if self.inner is not None:
            self.inner.on_epoch_begin(epoch, logs)

    @guarded("fit: batch end")
    def batch_end(self, batch: int, logs=None) -> None:
        # After a mid-epoch restore Keras counts batches from a NumPy int64
        # (measured), which JSON cannot encode.
        batch = int(batch)
        if self.inner is not None:
            self.last_step = self.epoch * self.steps + batch + 1
            self.inner.on_train_batch_end(batch, logs)
            return
        # Steps per epoch unknown: count this process's steps.
        self.last_step += 1
        loss = float((logs or {}).get("loss", float("nan")))
        self.emitter.emit(StepEvent, epoch=self.epoch, step=self.last_step, loss=loss, local_loss=loss)

    @guarded("fit: epoch end")
    def epoch_end(self, epoch: int, logs=None) -> None:
        epoch = int(epoch)
        if self.inner is not None:
            self.inner.on_epoch_end(epoch, logs)
            return
        loss = float((logs or {}).get("loss", float("nan")))
        self.emitter.emit(EpochEndEvent, epoch=epoch, step=self.last_step, loss=loss)

    @guarded("fit: done")
    def finished(self) -> None:
        if not self.began:
            return
        self.emitter.emit(
            DoneEvent,
            epoch=self.epoch,
            step=self.last_step,
            weights_digest=weights_digest(self.model.get_weights()),
        )


_reporter_classes: dict[int, type] = {}


def reporter_class(callbacks_module) -> type:
    """The callback class, a subclass of the Keras in use's Callback."""
    key = id(callbacks_module)
    if key not in _reporter_classes:

        class TfchaosAgentReporter(callbacks_module.Callback):
            def __init__(self, run: FitRun) -> None:
                super().__init__()
                self._tfchaos_run = run

            def on_train_begin(self, logs=None):
                self._tfchaos_run.train_begin(getattr(self, "params", None))

            def on_epoch_begin(self, epoch, logs=None):
                self._tfchaos_run.epoch_begin(epoch, logs)

            def on_train_batch_end(self, batch, logs=None):
                self._tfchaos_run.batch_end(batch, logs)

            def on_epoch_end(self, epoch, logs=None):
                self._tfchaos_run.epoch_end(epoch, logs)

            def on_train_end(self, logs=None):
                # Done at the end of training, not when fit returns: fit's
                # return can take 18 s more on one worker once its peer
                # exited (docs/findings.md); the weights are final here.
                self._tfchaos_run.finished()

        _reporter_classes[key] = TfchaosAgentReporter
    return _reporter_classes[key]


@guarded("fit: adding the reporter")
def prepare(original, callbacks_module_path: str, model, args: tuple, kwargs: dict, backups=KERAS2):
    """(run, args, kwargs) for the original fit with our callback last; None: call it unchanged."""
    if not enabled():
        return None
    callbacks_module = importlib.import_module(callbacks_module_path)
    bound = inspect.signature(original).bind(model, *args, **kwargs)
    given = bound.arguments.get("callbacks")
    if isinstance(given, getattr(callbacks_module, "CallbackList", ())):
        return None  # a ready CallbackList: adding to it would change the caller's object
    user = list(given) if given is not None else []
    run = FitRun(model, user, bound.arguments.get("initial_epoch", 0), callbacks_module, backups=backups)
    bound.arguments["callbacks"] = user + [reporter_class(callbacks_module)(run)]
    return run, bound.args[1:], bound.kwargs


def wrap_fit(original, callbacks_module_path: str, backups: BackupFormat = KERAS2):
    @functools.wraps(original)
    def fit(self, *args, **kwargs):
        prepared = prepare(original, callbacks_module_path, self, args, kwargs, backups)
        if prepared is not None:
            _, args, kwargs = prepared
        fit_began()  # fit's optimizer steps and BackupAndRestore saves are reported here, not as a loop's
        try:
            history = original(self, *args, **kwargs)
        except Exception as exc:
            report_exception(exc)
            raise
        finally:
            fit_ended()
        return history

    setattr(fit, ORIGINAL, original)
    return fit


@guarded("fit: the patch")
def patch_training_module(module) -> None:
    """Replace the fit of ``module``'s training class (once) by the reporting wrapper; a
    module without it (a Keras the agent does not know) gets a notice, and fit runs as is."""
    class_name, callbacks_path, backups = fit_hook(module.__name__)
    cls = getattr(module, class_name, None)
    original = getattr(cls, "__dict__", {}).get("fit")
    if original is None:
        emitter().emit(
            NoticeEvent,
            topic="agent",
            text=f"no {class_name}.fit in {module.__name__}: this Keras's fit is not observed "
            "(its optimizer's steps may still be)",
        )
        return
    if hasattr(original, ORIGINAL):
        return
    cls.fit = wrap_fit(original, callbacks_path, backups)
