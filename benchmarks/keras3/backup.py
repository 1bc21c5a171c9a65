"""Keras BackupAndRestore(backup_dir=/shared/backup) under MWMS on a volume every worker mounts.

  backup.py KILL_EPOCH KILL_TASK [SAVE_FREQ]

5 epochs x 20 steps of the fit.py model on a plain dataset. KILL_EPOCH >= 0: worker
KILL_TASK exits at once (os._exit(137)) at on_epoch_begin(KILL_EPOCH) (the backup of epoch KILL_EPOCH-1
is on disk); -1: no kill (a resume run). SAVE_FREQ: "epoch" (default) or a batch count.
Under Keras 3 set FIT_PATCH=map+reduce (fit fails under MWMS without it, see fit.py).
Env: BACKUP_PER_WORKER=1 gives each worker /shared/backup/w<i>; MAKE_BACKUP_DIR=1; and
h5py's HDF5_USE_FILE_LOCKING=FALSE to see what the writes do without HDF5's file lock.
Emits: each epoch begun, each backup write (begin/end time, which worker), the backup
folder's listing (name, size, mtime, inode) after each write and at train end, the
restore (which epoch fit began at), errors.
"""

import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow as tf  # noqa: E402
from common import data, digest, emit, first_line, num_workers, tail, task_index, unfilter_keras, versions, where  # noqa: E402

KILL_EPOCH, KILL_TASK = int(sys.argv[1]), int(sys.argv[2])
SAVE_FREQ = sys.argv[3] if len(sys.argv) > 3 else "epoch"
SAVE_FREQ = SAVE_FREQ if SAVE_FREQ == "epoch" else int(SAVE_FREQ)
TASK = task_index()
# BACKUP_PER_WORKER=1: each worker its own folder /shared/backup/w<i> (the fix measured).
BACKUP = f"/shared/backup/w{TASK}" if os.environ.get("BACKUP_PER_WORKER") else "/shared/backup"
# MAKE_BACKUP_DIR=1: create the folder before fit (as a job or its orchestrator would), which
# takes the workers' makedirs race out of the measurement.
if os.environ.get("MAKE_BACKUP_DIR"):
    os.makedirs(BACKUP, exist_ok=True)
emit(event="start", kill_epoch=KILL_EPOCH, kill_task=KILL_TASK, save_freq=SAVE_FREQ, **versions())
unfilter_keras()
if os.environ.get("FIT_PATCH"):
    import k3patch

    k3patch.apply(os.environ["FIT_PATCH"])
tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
GLOBAL_BATCH = 32 * num_workers()


def listing():
    out = []
    for d, _, files in os.walk(BACKUP):
        for f in sorted(files):
            p = os.path.join(d, f)
            try:
                st = os.stat(p)
                out.append(
                    f"{os.path.relpath(p, BACKUP)} {st.st_size}B ino{st.st_ino} {st.st_mtime_ns // 1_000_000 % 100000}ms"
                )
            except FileNotFoundError:
                out.append(f"{os.path.relpath(p, BACKUP)} (vanished)")
    return out


BR = tf.keras.callbacks.BackupAndRestore
keras3 = hasattr(BR, "_save_model") and "keras.src" in BR.__module__
emit(event="callback", cls=f"{BR.__module__}.{BR.__name__}", keras3=keras3)


def wrap(name):
    orig = getattr(BR, name)

    def w(self, *a, **k):
        t0 = time.time()
        emit(event="cb_begin", method=name, t=round(t0, 3), args=[str(x) for x in a][:1])
        try:
            return orig(self, *a, **k)
        except Exception as exc:  # noqa: BLE001
            emit(event="cb_error", method=name, error=first_line(exc), tail=tail(exc), where=where(exc))
            raise
        finally:
            emit(
                event="cb_end",
                method=name,
                t=round(time.time(), 3),
                dt_ms=round((time.time() - t0) * 1000, 1),
                listing=listing(),
            )

    setattr(BR, name, w)


for name in (
    ["_save_model", "_load_model", "on_train_end"] if keras3 else ["on_train_begin", "on_epoch_end", "on_train_end"]
):
    wrap(name)

x, y = data()
with strategy.scope():
    model = tf.keras.Sequential(
        [tf.keras.Input((20,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)]
    )
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")


class Probe(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        emit(
            event="epoch_begin",
            epoch=epoch,
            iterations=int(self.model.optimizer.iterations.numpy()),
            digest=digest([v.numpy() for v in self.model.weights]),
        )
        if epoch == KILL_EPOCH and TASK == KILL_TASK:
            emit(event="kill_self", epoch=epoch)
            # The script is PID 1 in its container, which ignores its own SIGKILL: exit
            # at once instead, with no cleanup, as a killed process would.
            os._exit(137)

    def on_epoch_end(self, epoch, logs=None):
        emit(event="epoch_end", epoch=epoch, loss=float(logs["loss"]))


emit(event="before_fit", listing=listing())
try:
    model.fit(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH).repeat(),
        epochs=5,
        steps_per_epoch=20,
        verbose=0,
        callbacks=[BR(backup_dir=BACKUP, save_freq=SAVE_FREQ), Probe()],
    )
except Exception as exc:  # noqa: BLE001
    traceback.print_exc()
    emit(event="error", error=first_line(exc), tail=tail(exc), where=where(exc), listing=listing())
    sys.exit(1)
emit(
    event="done",
    iterations=int(model.optimizer.iterations.numpy()),
    digest=digest([v.numpy() for v in model.weights]),
    listing=listing(),
)
