"""Train with MultiWorkerMirroredStrategy from TF_CONFIG and report events.

Order matters: the coordination service (our heartbeat timeout) must be
configured before the strategy is created, and the backup is peeked *before*
the input is built, so the input starts at the restored global step.
"""

from __future__ import annotations

import os
import sys

from chaos.events import CheckpointEvent, DoneEvent, ErrorEvent, RestoredEvent, StartEvent
from chaos.worker import backups, data, mirrored, tfcompat
from chaos.worker.backup_formats import latest_backup, resume_position, resume_position_or_start, saved_epoch
from chaos.worker.backups import make_keep_callback
from chaos.worker.callback import make_callback_class
from chaos.worker.cluster_env import TF_CONFIG_ENV, make_resolver
from chaos.worker.control import (
    ControlChannel,
    cap_address_space,
    cap_gpu_memory,
    make_control_callback,
    memory_demand_applier,
)
from chaos.worker.emit import Emitter
from chaos.worker.fingerprint import start_fields
from chaos.worker.model import build_model
from chaos.worker.nonfinite import done_position, terminate_on_nan_callbacks
from chaos.worker.seeding import apply_seeding
from chaos.worker.settings import WorkerSettings
from chaos.worker.startpoint import make_plan_callback, step_fields


def train(settings: WorkerSettings, emitter: Emitter) -> None:
    tf, keras = tfcompat.load()
    emitter.emit(StartEvent, **start_fields(tf.__version__, getattr(keras, "__version__", "")))
    resolver = make_resolver(tf, settings.cluster_resolver)
    cluster_spec = resolver.cluster_spec()
    num_workers = cluster_spec.num_tasks("worker")
    index = resolver.task_id
    local_batch = settings.local_batch(num_workers * settings.replicas)
    # Logical devices must be set before anything initializes TF's devices.
    one_host = mirrored.make_strategy(tf, settings.replicas) if settings.strategy == "mirrored" else None

    # A GPU's memory cap must be set before TF initializes the device.
    has_gpu = bool(settings.device_memory_mb) and cap_gpu_memory(tf, settings.device_memory_mb)
    apply_seeding(tf, keras, settings.seeding, settings.seed, index)
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=settings.collective_timeout_s or None)
    if one_host is not None:
        strategy = one_host
    elif settings.tf_config_after_strategy:
        strategy = strategy_before_tf_config(tf, options)
    else:
        tfcompat.configure_heartbeat(tf, cluster_spec, settings.heartbeat_timeout_s)
        strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver, communication_options=options)

    if settings.kept_copies:
        backups.repair(latest_backup(settings.backup_dir), settings.backup_dir)
    checkpoint = latest_backup(settings.backup_dir)
    epoch0, step_in_epoch0 = resume_position_or_start(checkpoint, settings.save_freq, settings.steps_per_epoch)
    start_step = epoch0 * settings.steps_per_epoch + step_in_epoch0
    shard = index if settings.shard_data else 0
    xs, ys = data.make_shard(settings.seed, shard, start_step, settings.total_steps, local_batch, settings.features)
    xs = data.poisoned(xs, start_step, settings.poison_step, settings.poison_value)  # poison_input fault

    def dataset_fn(_input_context):
        # Each element is one whole local batch; repeat() keeps Keras from
        # re-creating the iterator each epoch (it would restart the input).
        return tf.data.Dataset.from_tensor_slices((xs, ys)).repeat()

    # Several replicas in this container: one pipeline each (chaos.worker.mirrored);
    # the step event's batch_digest is replica 0's.
    shards = mirrored.replica_shards(settings, start_step, local_batch) if one_host is not None else None
    if shards:
        xs, ys = shards[0]
        dataset = mirrored.replica_dataset(tf, strategy, shards)
    else:
        dataset = strategy.distribute_datasets_from_function(dataset_fn)
    # Outside the strategy scope: a plain local variable, not mirrored or checkpointed.
    memory_demand = tf.Variable(0, dtype=tf.int64, trainable=False, name="chaos_memory_demand")
    with strategy.scope():
        model = build_model(
            tf,
            keras,
            settings.features,
            settings.hidden,
            settings.learning_rate,
            memory_demand,
            dropout=settings.dropout,
            replica_losses=settings.replicas > 1,
        )

    class ReportRestore(keras.callbacks.Callback):
        # Runs after BackupAndRestore.on_train_begin, so the weights are restored.
        def on_train_begin(self, logs=None):
            if checkpoint:
                emitter.emit(
                    RestoredEvent,
                    epoch=epoch0,
                    step=start_step,
                    checkpoint=os.path.basename(checkpoint),
                    weights_digest=data.weights_digest(model.get_weights()),
                )

    def report_backup(path: str) -> None:
        # A backup written but never named (kill_during_save): reported like any other.
        epoch, in_epoch = resume_position(path, settings.save_freq, settings.steps_per_epoch)
        emitter.emit(
            CheckpointEvent, epoch=epoch, step=epoch * settings.steps_per_epoch + in_epoch, path=os.path.basename(path)
        )

    ChaosEvents = make_callback_class(keras)
    ApplyRunnerCommands = make_control_callback(
        keras,
        ControlChannel(),
        {
            "memory_demand": memory_demand_applier(tf, memory_demand, has_gpu),
            "kill_during_save": backups.kill_during_save_applier(report_backup, saved_epoch),
        },
        emitter,
    )
    if settings.device_memory_mb and not has_gpu:
        # The CPU equivalent of a smaller device: what is mapped now plus the cap.
        cap_address_space(settings.device_memory_mb)
    callbacks = [
        ApplyRunnerCommands(),
        *terminate_on_nan_callbacks(keras, settings),
        keras.callbacks.BackupAndRestore(
            settings.backup_dir,
            save_freq=settings.save_freq,
            # Only when asked: older Keras (TF 2.15's) has no such argument.
            **({"save_before_preemption": True} if settings.save_before_preemption else {}),
        ),
        ReportRestore(),
        make_plan_callback(keras, emitter, settings, local_batch, epoch0)(),
        *(
            [make_keep_callback(keras, settings.backup_dir, settings.kept_copies, settings.save_freq, latest_backup)()]
            if settings.kept_copies and index == 0
            else []
        ),
        ChaosEvents(
            settings.steps_per_epoch,
            backup_dir=settings.backup_dir,
            save_freq=settings.save_freq,
            batch_digest=lambda step: data.batch_digest(xs[step - start_step], ys[step - start_step]),
            emitter=emitter,
            step_fields=step_fields(model, mirrored.replica_step_fields(shards, start_step) if shards else None),
        ),
    ]

    class ReportDone(keras.callbacks.Callback):
        # Said at the end of training, not after fit returns: fit's return can
        # take 18 s more on one worker once its peer has exited (measured in
        # about 1 run in 6; docs/findings.md), and the weights are final here.
        def on_train_end(self, logs=None):
            epoch, step = done_position(model, settings)  # early when TerminateOnNaN stopped it
            emitter.emit(
                DoneEvent,
                epoch=epoch,
                step=step,
                weights_digest=data.weights_digest(model.get_weights()),
            )

    model.fit(
        dataset,
        epochs=settings.epochs,
        steps_per_epoch=settings.steps_per_epoch,
        callbacks=[*callbacks, ReportDone()],
        verbose=0,
    )


def strategy_before_tf_config(tf, options):
    """The strategy as a job makes it when it sets TF_CONFIG only afterwards."""
    saved = os.environ.pop(TF_CONFIG_ENV, None)
    try:
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    finally:
        if saved is not None:
            os.environ[TF_CONFIG_ENV] = saved


def main() -> int:
    emitter = Emitter()
    try:
        settings = WorkerSettings.from_env(dict(os.environ))
        train(settings, emitter)
    except Exception as exc:  # reported as an event; the exit code says it failed
        # The address-space cap stands in for a device's memory: a GPU's OOM does not
        # starve the process's own unwinding and exit, so neither may the cap. The peers
        # learn of the failure only when this process exits and closes its sockets.
        cap_address_space(None)
        cls = type(exc)
        emitter.emit(
            ErrorEvent,
            error_class=f"{cls.__module__}.{cls.__qualname__}",
            message=str(exc)[:4000],
        )
        print(f"worker failed: {cls.__name__}: {exc}", file=sys.stderr)
        return 1
    return 0
