"""Shared helpers for the keras3 measurement scripts (run inside a worker container).

Every script prints one JSON object per line prefixed with "@@ " (so they can be
grepped out of TF's log noise); everything else is log.
"""

import hashlib
import json
import os
import sys
import traceback

import numpy as np


def emit(**kw):
    kw.setdefault("task", task_index())
    print("@@ " + json.dumps(kw, default=str), flush=True)


def task_index():
    cfg = os.environ.get("TF_CONFIG")
    if not cfg:
        return None
    return json.loads(cfg)["task"]["index"]


def num_workers():
    return len(json.loads(os.environ["TF_CONFIG"])["cluster"]["worker"])


def first_line(exc):
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__module__}.{type(exc).__name__}: {msg[0][:300] if msg else ''}"


def tail(exc):
    """The last line of the message (a PerReplica repr puts the useful part at the end)."""
    msg = str(exc).strip().splitlines()
    return msg[-1][:300] if len(msg) > 1 else None


def unfilter_keras():
    """Keras 3 filters its own frames out of tracebacks; keep them for the record."""
    try:
        import keras

        keras.config.disable_traceback_filtering()
    except Exception:  # noqa: BLE001
        pass


def where(exc):
    """The innermost frame of the traceback that is library code, for the record."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return None
    f = tb[-1]
    return f"{f.filename.split('site-packages/')[-1]}:{f.lineno} in {f.name}"


def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def versions():
    import tensorflow as tf

    out = {
        "tf": tf.__version__,
        "py": sys.version.split()[0],
        "TF_USE_LEGACY_KERAS": os.environ.get("TF_USE_LEGACY_KERAS"),
    }
    try:
        import keras

        out["keras"] = keras.__version__
    except Exception as e:  # noqa: BLE001
        out["keras"] = f"import failed: {e}"
    try:
        import tf_keras

        out["tf_keras"] = tf_keras.__version__
    except Exception as e:  # noqa: BLE001
        out["tf_keras"] = f"absent: {type(e).__name__}"
    k = tf.keras
    out["tf.keras"] = f"{getattr(k, '__name__', type(k).__name__)} {getattr(k, '__version__', '?')}"
    out["tf.keras.Model"] = f"{tf.keras.Model.__module__}.{tf.keras.Model.__name__}"
    return out


def data(n=1280, seed=0):
    """20 features -> 1 target, a fixed linear function plus noise; same on every worker."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 20)).astype("float32")
    w = rng.standard_normal((20, 1)).astype("float32")
    y = (x @ w + 0.1 * rng.standard_normal((n, 1))).astype("float32")
    return x, y
