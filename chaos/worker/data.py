"""Deterministic synthetic data: every batch is a pure function of (seed, step, shard).

That is what makes exact recovery possible: BackupAndRestore restores the model,
the optimizer and the epoch, but not an input pipeline's position (FINDINGS.md).
Because batch ``s`` depends on nothing but ``s``, the harness restarts the input
at the restored global step and the resumed run sees the very batches the
uninterrupted run saw. NumPy only, so the digests can be recomputed anywhere.
"""

from __future__ import annotations

import hashlib

import numpy as np

from chaos.worker.digest import weights_digest  # noqa: F401  (data.weights_digest, as the harness calls it)


def _true_weights(seed: int, features: int) -> np.ndarray:
    return np.random.default_rng([seed, 7919]).normal(size=(features, 1)).astype(np.float32)


def make_batch(seed: int, step: int, shard: int, local_batch: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch that shard ``shard`` consumes at 0-based global step ``step``."""
    rng = np.random.default_rng([seed, step, shard])
    x = rng.normal(size=(local_batch, features)).astype(np.float32)
    noise = rng.normal(scale=0.1, size=(local_batch, 1)).astype(np.float32)
    y = np.tanh(x @ _true_weights(seed, features)) + noise
    return x, y.astype(np.float32)


def make_shard(
    seed: int, shard: int, start_step: int, total_steps: int, local_batch: int, features: int
) -> tuple[np.ndarray, np.ndarray]:
    """Batches ``start_step .. total_steps-1`` stacked: shape [steps, local_batch, ...]."""
    steps = range(start_step, total_steps)
    if not steps:
        empty = np.zeros((0, local_batch, features), np.float32)
        return empty, np.zeros((0, local_batch, 1), np.float32)
    pairs = [make_batch(seed, s, shard, local_batch, features) for s in steps]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


def batch_digest(x: np.ndarray, y: np.ndarray) -> str:
    """Short content digest of one batch, comparable across workers and runs."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(x).tobytes())
    h.update(np.ascontiguousarray(y).tobytes())
    return h.hexdigest()[:16]


def poisoned(xs: np.ndarray, start_step: int, poison_step: int, value: str) -> np.ndarray:
    """``xs`` (batches from ``start_step``, 0-based) with one feature of the batch
    of global step ``poison_step`` (1-based, as step events count) set to ``value``
    ("nan" or "inf"): one corrupt record. ``poison_step`` 0, or a step outside
    ``xs``, returns ``xs`` itself (a resumed run may start past the poison)."""
    index = poison_step - 1 - start_step
    if poison_step < 1 or not 0 <= index < len(xs):
        return xs
    out = xs.copy()
    out[index, 0, 0] = np.float32(value)  # np.float32("nan") / ("inf")
    return out
