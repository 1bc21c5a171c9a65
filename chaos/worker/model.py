"""The workload: a small dense regression model whose train step also reports
this worker's own loss next to the global one.

Under MWMS Keras's logged ``loss`` is all-reduced; the reused-seed symptom
(every worker trains on the same data) only shows in the *local* losses, so
the train step returns both.

``memory_demand`` (an int64 variable, float32 elements) is extra memory each
step allocates and touches: 0 normally, raised by the device_oom and host_oom
faults (``control.py``) the way a larger batch or a longer sequence would. It
is a plain variable outside the model, so checkpoints and weight digests do
not see it, and the step's math is the same with or without it.
"""

from __future__ import annotations

WEIGHTS_FINITE_LOG = "weights_finite"  # the train step's log: every weight finite after the update


def build_model(
    tf,
    keras,
    features: int,
    hidden: int,
    learning_rate: float,
    memory_demand=None,
    dropout: float = 0.0,
    replica_losses: bool = False,
):
    from chaos.worker.dropout import MASK_LOG, hidden_with_dropout

    hidden_layers, drop = hidden_with_dropout(tf, keras, hidden, dropout) if dropout else (None, None)

    class ChaosModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                pred = self(x, training=True)
                local_loss = tf.reduce_mean(tf.square(pred - y))
                # Scale so the gradients all-reduced (SUM) by MWMS average over workers.
                replicas = tf.distribute.get_strategy().num_replicas_in_sync
                scaled = local_loss / tf.cast(replicas, local_loss.dtype)
            grads = tape.gradient(scaled, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            ctx = tf.distribute.get_replica_context()
            global_loss = ctx.all_reduce(tf.distribute.ReduceOp.SUM, scaled)
            # Read after the update (automatic control dependencies order it): the
            # loss cannot say it, as oneDNN's fused ReLU turns a NaN pre-activation into 0.
            finite = [tf.reduce_all(tf.math.is_finite(v)) for v in self.trainable_variables]
            logs = {"loss": global_loss, "local_loss": local_loss, WEIGHTS_FINITE_LOG: tf.reduce_all(tf.stack(finite))}
            if memory_demand is not None:
                # Returned, so the allocation is not pruned from the graph.
                extra = tf.fill(tf.reshape(memory_demand.read_value(), [1]), 1.0)
                logs["memory_demand"] = tf.reduce_sum(extra)
            if replica_losses:
                # Several replicas in one worker (MirroredStrategy): every replica's own loss.
                logs["replica_local_losses"] = ctx.all_gather(tf.reshape(local_loss, [1]), axis=0)
            if drop is not None and drop.last_mask_hash is not None:
                logs[MASK_LOG] = drop.last_mask_hash
            return logs

    inputs = keras.Input(shape=(features,))
    if hidden_layers:
        h = inputs
        for layer in hidden_layers:
            h = layer(h)
    else:
        h = keras.layers.Dense(hidden, activation="relu")(inputs)
    outputs = keras.layers.Dense(1)(h)
    model = ChaosModel(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=learning_rate, momentum=0.9))
    # Keras's default ("auto") SUMs train_step outputs across workers under
    # MWMS; "first" keeps each worker's own values (the global one is already
    # all-reduced above).
    model.distribute_reduction_method = "first"
    return model
