"""How a worker seeds its random number generators (settings.seeding).

"global" is what the harness always did: one seed on every worker, with op
determinism, so runs are bit-exact. "per_worker" adds the task index, as the
seed articles advise. "unseeded" is a job that never seeds: op determinism is
left off too, because TF refuses unseeded random ops under it (RuntimeError
"Random ops require a seed to be set when determinism is enabled").
"""

from __future__ import annotations


def seed_for(seeding: str, seed: int, task_index: int) -> int | None:
    """The seed this worker sets, or None when it sets none."""
    if seeding == "unseeded":
        return None
    return seed + task_index if seeding == "per_worker" else seed


def apply_seeding(tf, keras, seeding: str, seed: int, task_index: int) -> int | None:
    value = seed_for(seeding, seed, task_index)
    if value is not None:
        keras.utils.set_random_seed(value)
        tf.config.experimental.enable_op_determinism()
    return value
