"""A counter tf.Variable updated in replica context under MWMS, for every
(synchronization, aggregation) pair, in one process per phase.

  counter.py train  DTYPE K [CTX] [DELTA]   create, run K steps, read, save
  counter.py resume DTYPE K [CTX] [DELTA]   create, restore the chief's save, read, K more steps

CTX: replica (default: `counter.assign_add(d)` inside strategy.run's step fn) or cross
(the same inside the tf.function but outside strategy.run). DELTA: one (d = 1) or task
(d = task index + 1, to see whose value an aggregation keeps). Every worker saves its own
copy to /shared/counter/<DTYPE>-<CTX>-<DELTA>/<combo>/w<i>/ckpt with tf.train.Checkpoint.write;
resume restores worker 0's (the chief's) on every worker, as TF's custom-loop tutorial does.
Reads: `cross` = counter.numpy() in cross-replica context (what a loop's `int(step)`
sees), `local` = strategy.experimental_local_results(counter) (this worker's copy),
`in_step` = counter.read_value() inside the step fn after the update.
"""

import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow as tf  # noqa: E402
from common import emit, first_line, task_index, versions, where  # noqa: E402

phase, dtype_name, K = sys.argv[1], sys.argv[2], int(sys.argv[3])
CTX = sys.argv[4] if len(sys.argv) > 4 else "replica"
DELTA = sys.argv[5] if len(sys.argv) > 5 else "one"
only = os.environ.get("ONLY")  # e.g. "ON_READ/SUM" to run one combo
dtype = getattr(tf, dtype_name)
TASK = task_index()
delta_value = 1 if DELTA == "one" else TASK + 1

emit(event="start", phase=phase, dtype=dtype_name, k=K, ctx=CTX, delta=DELTA, **versions())
strategy = tf.distribute.MultiWorkerMirroredStrategy()
S, A = tf.VariableSynchronization, tf.VariableAggregation
SYNCS = [S.AUTO, S.ON_WRITE, S.ON_READ]
AGGS = [A.NONE, A.SUM, A.MEAN, A.ONLY_FIRST_REPLICA]
root = f"/shared/counter/{dtype_name}-{CTX}-{DELTA}"


def num(x):
    return x.numpy().item() if hasattr(x, "numpy") else x


def reads(v):
    out = {}
    try:
        out["cross"] = num(v.read_value()) if hasattr(v, "read_value") else num(v)
    except Exception as exc:  # noqa: BLE001
        out["cross"] = "ERR " + first_line(exc)
    try:
        out["local"] = [num(t) for t in strategy.experimental_local_results(v)]
    except Exception as exc:  # noqa: BLE001
        out["local"] = "ERR " + first_line(exc)
    return out


for sync in SYNCS:
    for agg in AGGS:
        combo = f"{sync.name}/{agg.name}"
        if only and combo != only:
            continue
        rec = {"event": "combo", "phase": phase, "combo": combo}
        try:
            with strategy.scope():
                v = tf.Variable(tf.constant(0, dtype), synchronization=sync, aggregation=agg, name="counter")
            rec["type"] = type(v).__name__
            rec["trainable"] = bool(v.trainable)
        except Exception as exc:  # noqa: BLE001
            rec.update(stage="create", error=first_line(exc), where=where(exc))
            emit(**rec)
            continue
        ckpt = tf.train.Checkpoint(counter=v)
        path = f"{root}/{combo.replace('/', '-')}"
        if phase == "resume":
            try:
                ckpt.read(f"{path}/w0/ckpt").assert_consumed()
                rec["restored"] = reads(v)
                stored = {}
                for i in range(8):
                    p = f"{path}/w{i}/ckpt"
                    if os.path.exists(p + ".index"):
                        stored[f"w{i}"] = num(
                            tf.train.load_checkpoint(p).get_tensor("counter/.ATTRIBUTES/VARIABLE_VALUE")
                        )
                rec["stored"] = stored
            except Exception as exc:  # noqa: BLE001
                rec.update(stage="restore", error=first_line(exc), where=where(exc))
                emit(**rec)
                continue

        d = tf.constant(delta_value, dtype)

        def step_fn():
            v.assign_add(d)
            return v.read_value()

        @tf.function
        def train_step():
            if CTX == "cross":
                v.assign_add(d)
                return strategy.run(lambda: v.read_value())
            return strategy.run(step_fn)

        per_step = []
        try:
            for _s in range(K):
                r = train_step()
                per_step.append({"in_step": [num(t) for t in strategy.experimental_local_results(r)], **reads(v)})
        except Exception as exc:  # noqa: BLE001
            traceback.print_exc()
            rec.update(stage=f"update (step {len(per_step)})", error=first_line(exc), where=where(exc))
        rec["steps"] = per_step
        if phase == "train" and "error" not in rec:
            try:
                rec["saved"] = ckpt.write(f"{path}/w{TASK}/ckpt")
                rec["stored_own"] = num(
                    tf.train.load_checkpoint(f"{path}/w{TASK}/ckpt").get_tensor("counter/.ATTRIBUTES/VARIABLE_VALUE")
                )
            except Exception as exc:  # noqa: BLE001
                rec.update(stage="save", error=first_line(exc), where=where(exc))
        emit(**rec)
emit(event="done")
