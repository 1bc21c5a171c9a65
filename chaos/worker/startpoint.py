"""What a worker starts training from, reported so the checks can compare
workers: a plan event at train begin (after any restore) with the weights
digest and this worker's batch per step, and, on the run's first step, the
weights digest after that step and each step's dropout mask hash."""

from __future__ import annotations

from chaos.events import PlanEvent
from chaos.worker.digest import weights_digest
from chaos.worker.dropout import MASK_LOG, mask_digest
from chaos.worker.model import WEIGHTS_FINITE_LOG


def make_plan_callback(keras, emitter, settings, local_batch: int, initial_epoch: int):
    class ReportPlan(keras.callbacks.Callback):
        # After BackupAndRestore.on_train_begin: the weights are the restored ones,
        # and under MWMS the chief's initial values, broadcast at variable creation.
        def on_train_begin(self, logs=None):
            emitter.emit(
                PlanEvent,
                epochs=settings.epochs,
                steps_per_epoch=settings.steps_per_epoch,
                total_steps=settings.total_steps,
                initial_epoch=initial_epoch,
                save_every_steps=settings.save_interval_steps,
                checkpoint_dir=settings.backup_dir,
                weights_digest=weights_digest(self.model.get_weights()),
                local_batch=local_batch,
            )

    return ReportPlan


def step_fields(model, more=None):
    """ChaosEvents' step_fields: the mask hash and whether the weights are finite
    every step, the weights after the first, and what ``more`` adds (the mirrored
    strategy's per-replica fields)."""

    def fields(logs: dict, first: bool, step: int) -> dict:
        out = {"dropout_mask": mask_digest(logs.get(MASK_LOG))}
        if WEIGHTS_FINITE_LOG in logs:
            out["weights_finite"] = bool(logs[WEIGHTS_FINITE_LOG])
        if first:
            out["weights_digest"] = weights_digest(model.get_weights())
        if more is not None:
            out.update(more(logs, first, step))
        return out

    return fields
