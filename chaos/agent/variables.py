"""What a ``tf.train.Checkpoint`` holds, read the same way on every worker.

The object graph is walked from the checkpoint's root by the names TF saves
under (``model/layer_with_weights-0/kernel``), so the order of the variables,
and so the digest, is the same in every process that built the same objects.
Left out: ``save_counter`` (it counts this process's saves, and the tutorial's
non-chief workers save to a folder they delete) and on-read-synchronized
variables (metrics: reading one across replicas is a collective, which must not
run from the agent). ``counters`` reads the job's integer counters for the
checkpoint and restored events, an on-read one as this worker's part.
"""

from __future__ import annotations

from chaos.agent.digest import weights_digest

MAX_OBJECTS = 100_000  # a walk that finds more is not a training checkpoint's graph


def children(obj) -> dict:
    import tensorflow as tf

    view = getattr(tf.train, "TrackableView", None)
    if view is not None:
        return dict(view(obj).children(obj))
    return dict(obj._trackable_children())  # TF before TrackableView


def walk(root):
    """(path, trackable) for everything reachable from ``root``, each object once, by path."""
    seen = {id(root)}
    queue = [("", root)]
    out = []
    while queue and len(out) < MAX_OBJECTS:
        prefix, obj = queue.pop(0)
        for name, child in sorted(children(obj).items()):
            if id(child) in seen:
                continue
            seen.add(id(child))
            path = f"{prefix}/{name}" if prefix else name
            out.append((path, child))
            queue.append((path, child))
    return out


def _is_on_read(var) -> bool:
    import tensorflow as tf

    return getattr(var, "synchronization", None) == tf.VariableSynchronization.ON_READ


def as_tf_variable(obj):
    """The tf.Variable ``obj`` is or holds: Keras 3's variables are no tf.Variable (measured) but
    wrap one (a MirroredVariable under a strategy) as ``value``; None for anything else."""
    import tensorflow as tf

    if isinstance(obj, tf.Variable):
        return obj
    if not type(obj).__module__.startswith("keras"):
        return None
    for name in ("_value", "value"):  # the backend variable; ``value`` may be a cast in an autocast scope
        inner = getattr(obj, name, None)
        if isinstance(inner, tf.Variable):
            return inner
    return None


def checkpointed_variables(root) -> list[tuple[str, object]]:
    out, seen = [], set()
    for path, obj in walk(root):
        var = as_tf_variable(obj)
        if var is None or id(var) in seen or path == "save_counter" or _is_on_read(var):
            continue
        seen.add(id(var))
        out.append((path, var))
    return out


def digest(root) -> str:
    """The digest of the variables ``root`` checkpoints, in path order."""
    return weights_digest([var.numpy() for _, var in checkpointed_variables(root)])


def integer_value(var) -> int | None:
    """A scalar integer variable's value (a Keras 3 variable too); None for anything else."""
    read = _read_handle(var)
    if read is None and type(var).__module__.startswith("keras"):
        inner = as_tf_variable(var)  # Keras 3's variable: the tf.Variable it wraps
        read = _read_handle(inner) if inner is not None else None
    if read is not None:
        return read
    try:
        value = var.numpy()
    except AttributeError:
        value = getattr(var, "value", None)
        value = value.numpy() if value is not None else None
    if value is None or getattr(value, "shape", ()) not in ((), (1,)):
        return None
    if getattr(value, "dtype", None) is not None and value.dtype.kind not in "iu":
        return None
    return int(value.reshape(()) if getattr(value, "shape", ()) else value)


def _read_handle(var) -> int | None:
    """A scalar integer tf.Variable's value by one ReadVariableOp on its handle: the agent reads
    the optimizer's ``iterations`` after every step, and ``numpy()`` costs a MirroredVariable
    250 us a step there (its distribution and tape bookkeeping) against 40 us this way (measured
    in a 1-worker MWMS, TF 2.21, docs/notebook/agent.md). None where this way does not apply (an
    on-read variable reads its replicas; Keras 3 variables have a string dtype); the caller then
    reads the public way."""
    dtype = getattr(var, "dtype", None)
    if not getattr(dtype, "is_integer", False):
        return None
    try:
        if _is_on_read(var):
            return None
        from tensorflow.python.ops import gen_resource_variable_ops

        value = gen_resource_variable_ops.read_variable_op(var.handle, dtype).numpy()
    except Exception:  # noqa: BLE001 - a handle this TF does not give: read it the public way
        return None
    if value.shape == ():
        return int(value)
    return int(value[0]) if value.shape == (1,) else None


def identities(var) -> set[int]:
    """The ids of ``var``, the tf.Variable it wraps (Keras 3) and a distributed one's component
    variables: an assign to ``var`` is an assign to one of them (chaos.agent.tf_patches)."""
    out = {id(var)}
    try:
        inner = as_tf_variable(var)
    except Exception:  # noqa: BLE001 - no TF to ask: the variable itself is watched
        inner = None
    for v in (inner, *(getattr(inner, "values", None) or ())) if inner is not None else ():
        out.add(id(v))
    return out


def child_named(root, name: str):
    return children(root).get(name)


def optimizers_in(root) -> list:
    """The optimizers ``root`` checkpoints (objects with ``iterations`` and an apply)."""
    return [
        obj
        for _, obj in walk(root)
        if hasattr(obj, "iterations") and (hasattr(obj, "apply_gradients") or hasattr(obj, "apply"))
    ]


def counters(root) -> tuple[dict[str, int], dict[str, int]]:
    """The job's integer counters: the scalar integer variables at ``root``'s top (``save_counter``
    left out), as (readings, parts). A reading is what this worker's ``int(var)`` gives; an on-read
    variable aggregated by SUM gives a part instead, this worker's own copies summed (the job reads
    the sum of every worker's part, a collective the agent does not run). Other on-read
    aggregations are left out for the same reason."""
    import tensorflow as tf

    readings: dict[str, int] = {}
    parts: dict[str, int] = {}
    for name, child in sorted(children(root).items()):
        var = as_tf_variable(child)
        if var is None or name == "save_counter":
            continue
        if not _is_on_read(var):
            value = integer_value(var)
            if value is not None:
                readings[name] = value
            continue
        if getattr(var, "aggregation", None) != tf.VariableAggregation.SUM:
            continue
        local = [integer_value(v) for v in getattr(var, "values", None) or (var,)]
        if local and all(v is not None for v in local):
            parts[name] = sum(local)
    return readings, parts
