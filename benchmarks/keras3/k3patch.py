"""Two patches of Keras 3 private functions that let `fit` train under MWMS with more than
one worker. For measurement only (they reach into keras.src), not a fix to recommend.

  map     Trainer._maybe_symbolic_build calls strategy.reduce("MEAN", (x, y), axis=None) on the
          whole nested batch, which MWMS with >1 worker cannot do (ValueError: Attempt to
          convert a value (PerReplica:{...}) ...); build from this worker's local batch instead.
  reduce  reduce_per_replica calls strategy.reduce("MEAN", v, axis=0) under MWMS, which fails
          on the scalar loss (ValueError: Invalid reduction dimension 0 for input with 0
          dimensions); reduce rank-0 values with axis=None.

apply("map+reduce") applies both, apply("map") only the first, apply("skip") makes
_maybe_symbolic_build a no-op (fit then fails as with "map").
"""

import tensorflow as tf


def apply(kind):
    import keras
    from keras.src.backend.tensorflow import trainer as k3trainer

    orig_build = k3trainer.TensorFlowTrainer._maybe_symbolic_build

    def build_from_local_batch(self, iterator=None, data_batch=None):
        if self._distribute_strategy is None or iterator is None:
            return orig_build(self, iterator=iterator, data_batch=data_batch)
        for _, _, it in iterator:
            batch = next(it)
            break
        local = keras.tree.map_structure(
            lambda t: (
                self.distribute_strategy.experimental_local_results(t)[0]
                if isinstance(t, tf.distribute.DistributedValues)
                else t
            ),
            batch,
        )
        with self.distribute_strategy.scope():
            self._symbolic_build(data_batch=local)

    if kind == "skip":
        k3trainer.TensorFlowTrainer._maybe_symbolic_build = lambda self, iterator=None, data_batch=None: None
    elif kind in ("map", "map+reduce"):
        k3trainer.TensorFlowTrainer._maybe_symbolic_build = build_from_local_batch
    else:
        raise ValueError(f"unknown patch {kind!r}: map, map+reduce or skip")

    if kind == "map+reduce":
        orig_rpr = k3trainer.reduce_per_replica

        def reduce_per_replica(values, strategy, reduction):
            if reduction in ("auto", "mean") and k3trainer._collective_all_reduce_multi_worker(strategy):

                def one(v):
                    rank = (v.values[0] if isinstance(v, tf.distribute.DistributedValues) else v).shape.rank
                    return strategy.reduce("MEAN", v, axis=None if rank == 0 else 0)

                return keras.tree.map_structure(one, values)
            return orig_rpr(values, strategy, reduction)

        k3trainer.reduce_per_replica = reduce_per_replica
